// nmt metrics: (hypotheses file, reference file) -> score_hypotheses -> BLEU, chrF, TER.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/scoring_options.h"
#include "core/error.h"
#include "data/corpus.h"

namespace nmt::cli {
namespace {

int run_metrics(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Score a file of translations against a reference file, one segment per line: BLEU, "
      "chrF(++) and TER as sacreBLEU computes them, with their signatures. No model is "
      "needed.\n\n"
      "  nmt metrics --hyp hyp.de --ref test.de\n"
      "  nmt metrics --hyp hyp.zh --ref test.zh --lang zh --chrf-word-order 2\n");
  // clang-format off
  options.add_options("files")
      ("hyp", "the translations (plain or gzip)", cxxopts::value<std::string>(), "FILE")
      ("ref", "the references, as many lines (plain or gzip)", cxxopts::value<std::string>(),
       "FILE")
      ("lang", "the target language code (--tokenize auto picks by it: zh, ja, else 13a)",
       cxxopts::value<std::string>()->default_value(""), "CODE")
      ("json", "also write the scores to this JSON file", cxxopts::value<std::string>(), "FILE");
  // clang-format on
  add_scoring_options(options, "scores");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  if (!args.count("hyp") || !args.count("ref")) {
    throw Error("give both --hyp FILE (the translations) and --ref FILE (the references)");
  }
  const ScoringOptions scoring = scoring_from_args(args, args["lang"].as<std::string>());
  const std::filesystem::path hyp_file = args["hyp"].as<std::string>();
  const std::filesystem::path ref_file = args["ref"].as<std::string>();
  const std::vector<std::string> hypotheses = read_lines(hyp_file);
  const std::vector<std::string> references = read_lines(ref_file);
  if (hypotheses.size() != references.size()) {
    throw Error(hyp_file.string() + " has " + std::to_string(hypotheses.size()) + " lines but " +
                ref_file.string() + " has " + std::to_string(references.size()) +
                ": each translation needs the reference on the same line");
  }
  const MetricScores scores = score_hypotheses(hypotheses, references, scoring);
  std::cout << hypotheses.size() << " segments\n";
  print_scores(scores);
  if (args.count("json")) {
    nlohmann::json record = {
        {"hyp", hyp_file.string()}, {"ref", ref_file.string()}, {"sentences", hypotheses.size()}};
    record.update(score_fields(scores));
    write_scores_json(args["json"].as<std::string>(), record);
  }
  return 0;
}

const bool registered_metrics = register_command(
    {"metrics", "BLEU, chrF and TER of a translations file against references (no model)",
     run_metrics, 52});

}  // namespace
}  // namespace nmt::cli
