// nmt evaluate: argv -> (checkpoint, test set, DecodeConfig) -> evaluate_parallel -> report.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "cli/scoring_options.h"
#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "data/corpus.h"
#include "decode/evaluation.h"
#include "text/document.h"

namespace nmt::cli {
namespace {

namespace fs = std::filesystem;

/// Where hypotheses go, checked before the checkpoint is loaded: --output names one file for
/// one test set, --hyp-dir a directory; not both.
void check_hypotheses_options(const cxxopts::ParseResult& args) {
  if (args.count("output") && args.count("hyp-dir")) {
    throw Error("--output and --hyp-dir both say where hypotheses go: give one of them");
  }
  if (args.count("output") && split_names(args).size() > 1) {
    throw Error("--output names one hypotheses file: give one --split (or drop --output)");
  }
  if (args.count("output") && args.count("corpus") &&
      corpus_list_from_text(args["corpus"].as<std::string>(), "--corpus").size() > 1) {
    throw Error("--output names one hypotheses file: give one --corpus (or drop --output)");
  }
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
  print_scores(report.scores);
  std::printf(
      "decoding (%s, %s): %zu sentences in %.2f s = %.1f sentences/s, %.0f target tokens/s\n",
      set.name.c_str(), describe_search(decode).c_str(), report.hypotheses.size(),
      report.decode_seconds, report.sentences_per_second(), report.tokens_per_second());
}

/// One test set's scores as written by --json (read by scripts/bench/results_table.py).
nlohmann::json score_record(const EvaluationReport& report, const TestSet& set,
                            const DecodeSession& session) {
  nlohmann::json record = {{"test_set", set.name},
                           {"direction", set.corpus.src_lang + "-" + set.corpus.tgt_lang},
                           {"checkpoint", checkpoint_names(session)},
                           {"step", session.loaded.state.step},
                           {"sentences", report.hypotheses.size()},
                           {"loss", report.loss.loss()},
                           {"perplexity", report.loss.perplexity()},
                           {"sentences_per_s", report.sentences_per_second()}};
  Config decoding;  // every decode option, as config files write them
  decoding.decode = session.translator->config();
  record.update(config_to_json(decoding).at("decode"));
  record.update(score_fields(report.scores));
  return record;
}

int run_evaluate(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Evaluate a checkpoint on a test set: teacher-forced loss and perplexity, then BLEU, "
      "chrF and TER (sacreBLEU-compatible, with signatures) of its translations, and decoding "
      "speed.\n"
      "The split is read from the checkpoint config's data.dir in its direction (src_lang -> "
      "tgt_lang); --set data.dir=... points elsewhere.\n\n"
      "  nmt evaluate --checkpoint checkpoints/multi30k_en_de --split test_2016_flickr --beam 5\n"
      "  nmt evaluate --checkpoint run/best.pt --src test.en --ref test.de\n"
      "  nmt evaluate --checkpoint run --corpus '{\"tsv\": \"test.tsv\"}'\n");
  add_decode_options(options);
  add_workers_option(options, "model");
  // clang-format off
  options.add_options("test set")
      ("split", "split(s) of data.dir, comma-separated, e.g. test_2016_flickr,val",
       cxxopts::value<std::string>(), "NAME")
      ("corpus", "test corpus in any data.valid form: a split, {\"src\": F, \"tgt\": F}, "
       "{\"tsv\": F, \"src_column\": 0, \"tgt_column\": 1}, or a JSON list of them",
       cxxopts::value<std::string>(), "SPEC")
      ("src", "source file (with --ref)", cxxopts::value<std::string>(), "FILE")
      ("ref", "reference file (with --src)", cxxopts::value<std::string>(), "FILE")
      ("output", "hypotheses file (default: <checkpoint dir>/hyp.<split>.<tgt_lang>; one test "
       "set only)", cxxopts::value<std::string>(), "FILE")
      ("hyp-dir", "write the hypotheses files hyp.<split>.<tgt_lang> into this directory "
       "(created if missing) instead of next to the checkpoint", cxxopts::value<std::string>(),
       "DIR")
      ("json", "also write the scores of every test set to this JSON file",
       cxxopts::value<std::string>(), "FILE");
  // clang-format on
  add_scoring_options(options, "scores");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  check_hypotheses_options(args);
  // The options are checked before the model loads; --tokenize auto waits for its language.
  scoring_from_args(args, "");
  auto session = open_decode_session(args);
  install_interrupt_handlers();  // Ctrl-C / SIGTERM: keep the hypotheses so far, then stop
  session.translator->set_stop(&interrupted);
  session.translator->set_workers(decoding_workers(args, session.device));
  const Config& config = session.loaded.config;
  std::vector<TestSet> sets = test_sets(args, "ref");
  const LanguagePair pair = read_sets_in_pair(session, sets);
  const ScoringOptions scoring = scoring_from_args(args, pair.tgt);
  for (const auto& set : sets) {  // a missing split is reported before any decoding
    if (set.corpus.kind != CorpusKind::kSplit) continue;
    split_file(config.data.dir, set.corpus.split, set.corpus.src_lang);
    split_file(config.data.dir, set.corpus.split, set.corpus.tgt_lang);
  }
  const fs::path hyp_dir = args.count("hyp-dir") ? fs::path(args["hyp-dir"].as<std::string>())
                                                 : session.checkpoint.parent_path();
  if (args.count("hyp-dir")) {
    std::error_code error;
    fs::create_directories(hyp_dir, error);
    if (error) throw Error(hyp_dir.string() + ": cannot create directory: " + error.message());
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& set : sets) {
    const ParallelText text = read_corpus(config.data, set.corpus);
    std::printf("checkpoint %s (step %lld), %s, %s: %zu sentences, %s -> %s\n",
                checkpoint_names(session).c_str(),
                static_cast<long long>(session.loaded.state.step),
                describe_device(session.device).c_str(), set.name.c_str(), text.size(),
                set.corpus.src_lang.c_str(), set.corpus.tgt_lang.c_str());
    std::fflush(stdout);
    // A test line is one segment, translated as written; one longer than `nmt translate`'s
    // segments is split as it splits it (text/chunking.h), not cut. All lines in one pass, so
    // they are length-sorted together, as Translator::translate sorts them.
    const TextOptions whole_lines = whole_line_options(set.corpus.src_lang, set.corpus.tgt_lang,
                                                       session_text_options(session).max_pieces);
    const auto report = evaluate_parallel(
        *session.translator, text, scoring, [&](const std::vector<std::string>& lines) {
          return translate_text(*session.translator, lines, whole_lines, 1,
                                std::numeric_limits<size_t>::max());
        });
    const fs::path hyp_file = args.count("output")
                                  ? fs::path(args["output"].as<std::string>())
                                  : hyp_dir / ("hyp." + set.name + "." + set.corpus.tgt_lang);
    if (report.interrupted) {
      write_lines(hyp_file, report.hypotheses);
      std::cerr << "interrupted: " << set.name << " not scored; the first "
                << report.hypotheses.size() << " of " << text.size()
                << " hypotheses were written to " << hyp_file.string() << "\n";
      return 130;
    }
    print_report(report, set, session.translator->config());
    write_lines(hyp_file, report.hypotheses);
    std::cout << "hypotheses written to " << hyp_file.string() << "\n";
    results.push_back(score_record(report, set, session));
  }
  if (args.count("json")) {
    write_scores_json(args["json"].as<std::string>(), results);
  }
  return 0;
}

const bool registered_evaluate = register_command(
    {"evaluate", "loss, BLEU, chrF, TER and decoding speed of a checkpoint on a test set",
     run_evaluate, 50});

}  // namespace
}  // namespace nmt::cli
