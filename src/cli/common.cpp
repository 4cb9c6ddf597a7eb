#include "cli/common.h"

#include <filesystem>
#include <iostream>
#include <sstream>

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

std::vector<std::string> split_names(const cxxopts::ParseResult& args) {
  std::vector<std::string> names;
  if (!args.count("split")) return names;
  std::stringstream list(args["split"].as<std::string>());
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

std::vector<TestSet> test_sets(const cxxopts::ParseResult& args, const std::string& target) {
  const bool split = args.count("split") > 0;
  const bool corpus = args.count("corpus") > 0;
  const bool files = args.count("src") > 0 || args.count(target) > 0;
  if (int(split) + int(corpus) + int(files) != 1) {
    throw Error("give either --split NAME[,NAME...], --corpus SPEC or both --src and --" + target);
  }
  std::vector<TestSet> sets;
  if (split) {
    for (const auto& name : split_names(args)) sets.push_back({name, CorpusSpec::of_split(name)});
    if (sets.empty()) throw Error("--split: no split named (e.g. --split test_2016_flickr)");
    return sets;
  }
  if (corpus) {
    for (const auto& spec : corpus_list_from_text(args["corpus"].as<std::string>(), "--corpus")) {
      spec.validate("--corpus");
      sets.push_back({spec.name(), spec});
    }
    if (sets.empty()) throw Error("--corpus: no corpus given");
    return sets;
  }
  if (!args.count("src") || !args.count(target))
    throw Error("--src and --" + target + " go together");
  CorpusSpec spec;
  spec.kind = CorpusKind::kFiles;
  spec.src = args["src"].as<std::string>();
  spec.tgt = args[target].as<std::string>();
  return {{std::filesystem::path(spec.src).stem().string(), spec}};
}

}  // namespace nmt::cli
