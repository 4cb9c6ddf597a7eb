// nmt evaluate: argv -> (checkpoint, test set, DecodeConfig) -> evaluate_parallel -> report.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "core/device.h"
#include "core/error.h"
#include "data/corpus.h"
#include "decode/evaluation.h"

namespace nmt::cli {
namespace {

namespace fs = std::filesystem;

/// The test set the options name, and a short name for it (the split, or the source file stem).
struct TestSet {
  std::string name;
  fs::path src_file;
  fs::path ref_file;
};

TestSet test_set(const cxxopts::ParseResult& args, const DataConfig& data) {
  const bool split = args.count("split") > 0;
  const bool files = args.count("src") > 0 || args.count("ref") > 0;
  if (split == files) throw Error("give either --split NAME or both --src FILE and --ref FILE");
  if (split) {
    const auto name = args["split"].as<std::string>();
    return {name, split_file(data.dir, name, data.src_lang),
            split_file(data.dir, name, data.tgt_lang)};
  }
  if (!args.count("src") || !args.count("ref")) throw Error("--src and --ref go together");
  const fs::path src = args["src"].as<std::string>();
  return {src.stem().string(), src, args["ref"].as<std::string>()};
}

void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
  if (!out.flush()) throw Error("cannot write hypotheses to " + path.string());
}

void print_report(const EvaluationReport& report, const TestSet& set, const DecodeConfig& decode) {
  std::printf(
      "loss %.4f | perplexity %.2f (teacher-forced, no label smoothing, %lld target "
      "tokens)\n",
      report.loss.loss(), report.loss.perplexity(), static_cast<long long>(report.loss.tokens));
  std::cout << report.bleu.to_string() << "\n  signature: " << report.bleu.signature << "\n"
            << report.chrf.to_string() << "\n  signature: " << report.chrf.signature << "\n";
  std::printf(
      "decoding (%s, beam %lld, alpha %.2f): %zu sentences in %.2f s = %.1f "
      "sentences/s, %.0f target tokens/s\n",
      set.name.c_str(), static_cast<long long>(decode.beam), decode.length_penalty,
      report.hypotheses.size(), report.decode_seconds, report.sentences_per_second(),
      report.tokens_per_second());
}

int run_evaluate(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Evaluate a checkpoint on a test set: teacher-forced loss and perplexity, then BLEU and "
      "chrF (sacreBLEU-compatible, with signatures) of its translations, and decoding speed.\n"
      "The split is read from the checkpoint config's data.dir in its direction (src_lang -> "
      "tgt_lang); --set data.dir=... points elsewhere.\n\n"
      "  nmt evaluate --checkpoint checkpoints/multi30k_en_de --split test_2016_flickr --beam 5\n"
      "  nmt evaluate --checkpoint run/best.pt --src test.en --ref test.de\n");
  add_decode_options(options);
  // clang-format off
  options.add_options("test set")
      ("split", "split of data.dir, e.g. test_2016_flickr", cxxopts::value<std::string>(), "NAME")
      ("src", "source file (with --ref)", cxxopts::value<std::string>(), "FILE")
      ("ref", "reference file (with --src)", cxxopts::value<std::string>(), "FILE")
      ("lowercase", "case-insensitive BLEU and chrF")
      ("output", "hypotheses file (default: <checkpoint dir>/hyp.<split>.<tgt_lang>)",
       cxxopts::value<std::string>(), "FILE")
      ("set", "override a config key: section.key=value (data.*, decode.*; repeatable)",
       cxxopts::value<std::vector<std::string>>());
  // clang-format on
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  auto session = open_decode_session(args, overrides_from_args(args));
  const Config& config = session.loaded.config;
  const TestSet set = test_set(args, config.data);
  const ParallelText text = read_parallel(set.src_file, set.ref_file);
  std::printf("checkpoint %s (step %lld), %s, %s: %zu sentences, %s -> %s\n",
              session.checkpoint.string().c_str(),
              static_cast<long long>(session.loaded.state.step),
              describe_device(session.device).c_str(), set.name.c_str(), text.size(),
              config.data.src_lang.c_str(), config.data.tgt_lang.c_str());
  std::fflush(stdout);

  const auto report = evaluate_parallel(*session.translator, text, args.count("lowercase") > 0);
  print_report(report, set, session.translator->config());
  const fs::path hyp_file =
      args.count("output")
          ? fs::path(args["output"].as<std::string>())
          : session.checkpoint.parent_path() / ("hyp." + set.name + "." + config.data.tgt_lang);
  write_lines(hyp_file, report.hypotheses);
  std::cout << "hypotheses written to " << hyp_file.string() << "\n";
  return 0;
}

const bool registered = register_command(
    {"evaluate", "loss, BLEU, chrF and decoding speed of a checkpoint on a test set", run_evaluate,
     50});

}  // namespace
}  // namespace nmt::cli
