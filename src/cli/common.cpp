#include "cli/common.h"

#include <filesystem>
#include <iostream>

#include "core/error.h"

namespace nmt::cli {

void add_config_options(cxxopts::Options& options) {
  options.add_options("config")("c,config",
                                "JSON config file (see configs/); repeat it to lay files over "
                                "each other, later ones overriding earlier ones key by key",
                                cxxopts::value<std::string>())(
      "set", "override a config key: section.key=value (repeatable)",
      cxxopts::value<std::vector<std::string>>());
}

bool parse(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult& result) {
  options.add_options()("h,help", "show this help");
  try {
    result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw Error(std::string(e.what()) + " (see " + options.program() + " --help)");
  }
  if (result.count("help")) {
    std::cout << options.help() << "\n";
    return false;
  }
  if (!result.unmatched().empty()) {
    throw Error("unexpected argument '" + result.unmatched().front() + "' (see " +
                options.program() + " --help)");
  }
  return true;
}

std::vector<std::string> overrides_from_args(const cxxopts::ParseResult& result) {
  // The raw values, in order: cxxopts would split a vector option's value at commas, which
  // breaks JSON values (data.train=[{"src": "a", "tgt": "b"}]) and lists (a,b).
  std::vector<std::string> assignments;
  for (const auto& argument : result.arguments()) {
    if (argument.key() == "set") assignments.push_back(argument.value());
  }
  return assignments;
}

Config config_from_args(const cxxopts::ParseResult& result) {
  std::vector<std::filesystem::path> files;  // every --config, in order
  for (const auto& argument : result.arguments()) {
    if (argument.key() == "config") files.emplace_back(argument.value());
  }
  Config config = files.empty() ? Config() : load_configs(files);
  apply_overrides(config, overrides_from_args(result));
  return config;
}

}  // namespace nmt::cli
