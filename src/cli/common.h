#pragma once

#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "core/config.h"

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

}  // namespace nmt::cli
