#pragma once

#include <string>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "eval/metrics.h"

namespace nmt::cli {

/// --lowercase, --tokenize NAME and --chrf-word-order N (nmt evaluate, nmt metrics).
void add_scoring_options(cxxopts::Options& options, const std::string& group);

/// The options as given, for hypotheses in `target_language` (which resolves --tokenize auto);
/// checked (ScoringOptions::check), so a bad value fails before any work.
ScoringOptions scoring_from_args(const cxxopts::ParseResult& args,
                                 const std::string& target_language);

/// BLEU, chrF and TER with their signatures, as both commands print them.
void print_scores(const MetricScores& scores);

/// The scores and signatures as --json records carry them.
nlohmann::json score_fields(const MetricScores& scores);

/// Writes `scores` (indented) to --json's file and says so, or an nmt::Error naming it.
void write_scores_json(const std::string& path, const nlohmann::json& scores);

}  // namespace nmt::cli
