#pragma once

// Every error a user can reach from the command line, one case each: what is wrong, the command,
// and a fragment of the message that names the culprit. tests/test_bad_input.cpp runs them
// against the real binary (non-zero exit, the message, no crash, no hang) and checks that
// docs/errors.md lists exactly these cases with these messages.
//
// In arguments, {d} is the test's scratch directory, prepared by test_bad_input.cpp:
//   ckpt.pt (a valid checkpoint), random.pt (random bytes), truncated.pt (ckpt.pt cut in half),
//   empty.pt, text.pt (a JSON text), shape.pt (config d_model 64, weights d_model 32),
//   wide.pt (a valid d_model 64 checkpoint), binary.txt (random bytes), *.json (configs),
//   data/ (tiny.* fixture copies, mis.* misaligned, bin.* binary, void.* empty),
//   run/ (a trained run; group "resume" only), notrun/ (empty), nolast/ (config.json only).

#include <string>
#include <vector>

namespace nmt::test {

struct BadInputCase {
  const char* group;  ///< cli | config | data | checkpoint | resume | translate | evaluate
  const char* name;   ///< the case's id in docs/errors.md
  std::vector<std::string> args;
  const char* message;          ///< the error output contains this
  const char* stdin_file = "";  ///< relative to {d}; empty: /dev/null
};

inline const std::vector<BadInputCase>& bad_input_cases() {
  static const std::vector<BadInputCase> cases = {
      // clang-format off
      {"cli", "unknown-command", {"frobnicate"}, "unknown command 'frobnicate'"},
      {"cli", "unknown-option", {"train", "--frobnicate"}, "frobnicate"},
      {"cli", "stray-argument", {"train", "--config", "{d}/tiny.json", "extra"},
       "unexpected argument 'extra'"},
      {"cli", "translate-without-checkpoint", {"translate", "A dog."},
       "--checkpoint PATH is required"},
      {"cli", "beam-not-a-number", {"translate", "--checkpoint", "{d}/ckpt.pt", "--beam", "abc"},
       "abc"},
      {"cli", "beam-zero", {"translate", "--checkpoint", "{d}/ckpt.pt", "--beam", "0", "A dog."},
       "decode.beam"},
      {"cli", "nbest-above-beam",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--beam", "2", "--nbest", "3", "A dog."},
       "decode.nbest"},
      {"cli", "precision-invalid",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--precision", "fp8", "A dog."},
       "--precision 'fp8' is not valid: choose one of auto, fp32, bf16"},
      {"cli", "set-without-equals", {"train", "--set", "model.d_model"},
       "--set 'model.d_model': expected section.key=value"},
      {"cli", "set-unknown-section", {"train", "--set", "nosuch.key=1"}, "unknown section 'nosuch'"},
      {"cli", "set-unknown-key", {"train", "--set", "model.d_modl=1"}, "unknown key 'd_modl'"},
      {"cli", "set-value-out-of-range", {"train", "--set", "model.dropout=2"}, "model.dropout"},
      {"cli", "set-wrong-type", {"train", "--set", "train.lr=abc"}, "train.lr"},
      {"cli", "device-invalid", {"train", "--device", "quantum"},
       "train.device = 'quantum' is not valid"},
      {"cli", "resume-with-config", {"train", "--resume", "{d}/notrun", "--config", "{d}/tiny.json"},
       "drop --config"},
      {"cli", "evaluate-split-and-src",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--split", "tiny", "--src", "{d}/data/tiny.en",
        "--ref", "{d}/data/tiny.de"},
       "give either --split"},
      {"cli", "evaluate-output-and-hyp-dir",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--split", "tiny", "--output", "{d}/h",
        "--hyp-dir", "{d}/hyps"},
       "--output and --hyp-dir both"},
      {"cli", "average-one-checkpoint", {"average", "--output", "{d}/avg.pt", "{d}/ckpt.pt"},
       "at least two checkpoints"},
      {"cli", "average-without-output", {"average", "{d}/ckpt.pt", "{d}/ckpt.pt"},
       "--output FILE is required"},
      {"cli", "bench-unknown", {"bench", "frobnicate"}, "unknown benchmark 'frobnicate'"},
      {"cli", "attention-layer-out-of-range",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--attention", "{d}/a.svg", "--layer", "9",
        "A dog."},
       "layer 9 is out of range"},

      {"config", "config-missing", {"train", "--config", "{d}/none.json"},
       "none.json: cannot open config file"},
      {"config", "config-not-json", {"train", "--config", "{d}/bad.json"}, "bad.json: invalid JSON"},
      {"config", "config-not-an-object", {"train", "--config", "{d}/list.json"},
       "list.json: expected a JSON object"},
      {"config", "config-unknown-section", {"train", "--config", "{d}/section.json"},
       "unknown section 'modle'"},
      {"config", "config-unknown-key", {"train", "--config", "{d}/key.json"}, "unknown key 'd_modl'"},
      {"config", "config-wrong-type", {"train", "--config", "{d}/type.json"},
       "model.d_model: expected an integer"},
      {"config", "config-heads-do-not-divide", {"train", "--config", "{d}/heads.json"},
       "model.d_model = 30"},
      {"config", "config-no-limit", {"train", "--config", "{d}/nolimit.json"}, "set a limit"},
      {"config", "config-100000-character-name", {"train", "--config", "{d}/longname.json"},
       "train.name is 100000 characters long"},

      {"data", "data-dir-missing", {"train", "--config", "{d}/tiny.json", "--set",
       "data.dir={d}/nodata"}, "no file for split 'tiny'"},
      {"data", "data-misaligned", {"train", "--config", "{d}/tiny.json", "--set",
       "data.train_split=mis"}, "misaligned parallel files"},
      {"data", "data-binary-file-as-text", {"train", "--config", "{d}/tiny.json", "--set",
       "data.train_split=bin"}, "bin.en' line 1: invalid UTF-8"},
      {"data", "data-empty", {"train", "--config", "{d}/tiny.json", "--set",
       "data.train_split=void"}, "no sentences"},

      {"checkpoint", "checkpoint-missing", {"translate", "--checkpoint", "{d}/none.pt", "A dog."},
       "none.pt: checkpoint not found"},
      {"checkpoint", "checkpoint-random-bytes",
       {"translate", "--checkpoint", "{d}/random.pt", "A dog."},
       "random.pt: not a readable nmt checkpoint"},
      {"checkpoint", "checkpoint-truncated",
       {"translate", "--checkpoint", "{d}/truncated.pt", "A dog."},
       "truncated.pt: not a readable nmt checkpoint"},
      {"checkpoint", "checkpoint-empty-file", {"translate", "--checkpoint", "{d}/empty.pt", "A dog."},
       "empty.pt: not a readable nmt checkpoint"},
      {"checkpoint", "checkpoint-text-file", {"evaluate", "--checkpoint", "{d}/text.pt", "--split",
       "tiny"}, "text.pt: not a readable nmt checkpoint"},
      {"checkpoint", "checkpoint-of-another-shape",
       {"translate", "--checkpoint", "{d}/shape.pt", "A dog."},
       "shape.pt: model weights do not match its config"},
      {"checkpoint", "checkpoint-dir-without-checkpoints",
       {"translate", "--checkpoint", "{d}/notrun", "A dog."}, "no best.pt or last.pt"},
      {"checkpoint", "average-different-shapes",
       {"average", "--output", "{d}/avg.pt", "{d}/ckpt.pt", "{d}/wide.pt"}, "wide.pt"},
      {"checkpoint", "inspect-random-bytes", {"inspect", "{d}/random.pt"},
       "random.pt: not a readable nmt checkpoint"},

      {"resume", "resume-not-a-run-dir", {"train", "--resume", "{d}/notrun"},
       "not a run directory (no config.json)"},
      {"resume", "resume-nothing-to-resume", {"train", "--resume", "{d}/nolast"},
       "nothing to resume (no last.pt)"},
      {"resume", "resume-changed-model", {"train", "--resume", "{d}/run", "--set",
       "model.d_model=64"}, "does not match the config: model.d_model"},
      {"resume", "new-run-over-a-run", {"train", "--config", "{d}/run/config.json"},
       "already holds a run (last.pt)"},
      {"resume", "resume-random-last-pt", {"train", "--resume", "{d}/broken"},
       "last.pt: not a readable nmt checkpoint"},

      {"translate", "translate-input-missing",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--input", "{d}/none.txt"},
       "cannot read --input"},
      {"translate", "translate-binary-input",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--input", "{d}/binary.txt"},
       "line 1: invalid UTF-8"},
      {"translate", "translate-binary-stdin", {"translate", "--checkpoint", "{d}/ckpt.pt"},
       "line 1: invalid UTF-8", "binary.txt"},
      {"translate", "translate-output-unwritable",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--output", "{d}/nodir/out.txt", "A dog."},
       "cannot write --output"},
      {"translate", "attention-unwritable",
       {"translate", "--checkpoint", "{d}/ckpt.pt", "--attention", "{d}/nodir/a.svg", "A dog."},
       "nodir/a.svg"},

      {"evaluate", "evaluate-ref-misaligned",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--src", "{d}/data/mis.en", "--ref",
        "{d}/data/mis.de"}, "misaligned parallel files"},
      {"evaluate", "evaluate-ref-missing",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--src", "{d}/data/tiny.en", "--ref",
        "{d}/none.de"}, "none.de"},
      {"evaluate", "evaluate-ref-binary",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--src", "{d}/data/bin.en", "--ref",
        "{d}/data/bin.de"}, "bin.en' line 1: invalid UTF-8"},
      {"evaluate", "evaluate-split-missing",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--split", "nosuch"}, "no file for split 'nosuch'"},
      {"evaluate", "evaluate-json-unwritable",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--src", "{d}/data/tiny_val.en", "--ref",
        "{d}/data/tiny_val.de", "--output", "{d}/h.de", "--json", "{d}/nodir/s.json"},
       "cannot write"},
      {"evaluate", "evaluate-hyp-dir-under-a-file",
       {"evaluate", "--checkpoint", "{d}/ckpt.pt", "--split", "tiny_val", "--hyp-dir",
        "{d}/ckpt.pt/hyps"}, "cannot create directory"},
      // clang-format on
  };
  return cases;
}

}  // namespace nmt::test
