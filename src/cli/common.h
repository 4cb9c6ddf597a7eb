#pragma once

#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "core/config.h"
#include "core/corpus_spec.h"

namespace nmt::cli {

/// Adds --config FILE and --set section.key=value (repeatable) to a subcommand's options.
void add_config_options(cxxopts::Options& options);

/// Parses argv; cxxopts errors become nmt::Error naming the option. Returns false (after
/// printing help) when --help was given.
bool parse(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult& result);

/// The config named by --config (or the defaults without one) with every --set applied in order,
/// validated.
Config config_from_args(const cxxopts::ParseResult& result);

/// The --set assignments given, in order.
std::vector<std::string> overrides_from_args(const cxxopts::ParseResult& result);

/// A parallel test set named on the command line, and a short name for it (the split, the
/// corpus' name or the source file's stem).
struct TestSet {
  std::string name;
  CorpusSpec corpus;
};

/// The split names of --split a,b,... (empty names skipped; none if --split is absent).
std::vector<std::string> split_names(const cxxopts::ParseResult& args);

/// The test sets the options name: each of --split a,b,..., each of --corpus, or the --src file
/// with the target file of option `target` ("ref" for evaluate, "tgt" for score). Exactly one of
/// the three forms must be given.
std::vector<TestSet> test_sets(const cxxopts::ParseResult& args, const std::string& target);

}  // namespace nmt::cli
