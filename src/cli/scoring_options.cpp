#include "cli/scoring_options.h"

#include <fstream>
#include <iostream>

#include "core/error.h"

namespace nmt::cli {

void add_scoring_options(cxxopts::Options& options, const std::string& group) {
  // clang-format off
  options.add_options(group)
      ("lowercase", "case-insensitive BLEU and chrF")
      ("tokenize", "BLEU's tokenizer, as sacreBLEU names them: auto (zh for a Chinese target, "
       "ja-mecab for Japanese, else 13a), 13a, intl, char, zh, ja-mecab, none",
       cxxopts::value<std::string>()->default_value("auto"), "NAME")
      ("chrf-word-order", "word n-gram orders chrF adds: 0 = chrF, 2 = chrF++",
       cxxopts::value<int>()->default_value("0"), "N");
  // clang-format on
}

ScoringOptions scoring_from_args(const cxxopts::ParseResult& args,
                                 const std::string& target_language) {
  ScoringOptions scoring;
  scoring.lowercase = args.count("lowercase") > 0;
  scoring.tokenize =
      require_choice<BleuTokenizer>("--tokenize", args["tokenize"].as<std::string>());
  scoring.chrf_word_order = args["chrf-word-order"].as<int>();
  scoring.target_language = target_language;
  scoring.check();
  return scoring;
}

void print_scores(const MetricScores& scores) {
  std::cout << scores.bleu.to_string() << "\n  signature: " << scores.bleu.signature << "\n"
            << scores.chrf.to_string() << "\n  signature: " << scores.chrf.signature << "\n"
            << scores.ter.to_string() << "\n  signature: " << scores.ter.signature << "\n";
  if (scores.bleu.signature != scores.bleu_lowercase.signature) {
    std::cout << "lowercased " << scores.bleu_lowercase.to_string() << "\n";
  }
}

nlohmann::json score_fields(const MetricScores& scores) {
  return {{"bleu", scores.bleu.score},
          {"bleu_lowercase", scores.bleu_lowercase.score},
          {"chrf", scores.chrf.score},
          {"ter", scores.ter.score},
          {"bleu_signature", scores.bleu.signature},
          {"chrf_signature", scores.chrf.signature},
          {"ter_signature", scores.ter.signature}};
}

void write_scores_json(const std::string& path, const nlohmann::json& scores) {
  std::ofstream out(path);
  out << scores.dump(2) << "\n";
  if (!out.flush()) throw Error("cannot write " + path);
  std::cout << "scores written to " << path << "\n";
}

}  // namespace nmt::cli
