// nmt average: argv -> average_checkpoints -> save_checkpoint.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/device.h"
#include "core/error.h"
#include "train/average.h"
#include "train/checkpoint.h"

namespace nmt::cli {
namespace {

int run_average(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Average the weights of checkpoints of one model (e.g. the last few of a run), which "
      "usually translates a little better than any one of them. Model configs and tokenizers "
      "must match. The result has no optimizer state (it is for translation and evaluation).\n\n"
      "  nmt average --output checkpoints/run/avg.pt checkpoints/run/step_*.pt\n");
  // clang-format off
  options.add_options()
      ("output", "the averaged checkpoint to write", cxxopts::value<std::string>(), "FILE")
      ("checkpoints", "checkpoints to average", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  options.parse_positional({"checkpoints"});
  options.positional_help("CKPT...");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  if (!args.count("output")) throw Error("--output FILE is required");
  if (!args.count("checkpoints")) throw Error("give the checkpoints to average");
  const auto names = args["checkpoints"].as<std::vector<std::string>>();
  if (names.size() < 2) throw Error("averaging needs at least two checkpoints, got one");
  const std::vector<std::filesystem::path> paths(names.begin(), names.end());
  LoadedModel averaged = average_checkpoints(paths, at::kCPU);
  const std::filesystem::path output = args["output"].as<std::string>();
  save_checkpoint(output, averaged.config, averaged.model, averaged.tokenizer, averaged.state);
  std::cout << "averaged " << paths.size() << " checkpoints into " << output.string() << " (step "
            << averaged.state.step << ")\n";
  return 0;
}

const bool registered_average =
    register_command({"average", "average the weights of several checkpoints", run_average, 60});

}  // namespace
}  // namespace nmt::cli
