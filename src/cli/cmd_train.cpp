// nmt train: argv -> Config -> Trainer.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/runtime.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "train/auto_recipe.h"
#include "train/trainer.h"

namespace nmt::cli {
namespace {

/// The config of a run to resume: RUN_DIR/config.json with the --set overrides on top.
Config resumed_config(const std::filesystem::path& run_dir, const cxxopts::ParseResult& args) {
  const auto path = run_dir / "config.json";
  if (!std::filesystem::exists(path)) {
    throw Error(run_dir.string() + ": not a run directory (no config.json); give --config instead");
  }
  Config config = load_config(path);
  config.train.run_dir = run_dir.string();
  apply_overrides(config, overrides_from_args(args));
  return config;
}

int run_train(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Train a Transformer translation model.\n\n"
      "  nmt train --config configs/multi30k_en_de.json\n"
      "  nmt train --resume checkpoints/multi30k_en_de --set train.max_minutes=90\n"
      "  nmt train --config base.json --config mine.json   (mine.json overrides base.json)\n"
      "  nmt train --config my_domain.json --init-from checkpoints/multi30k_en_de\n"
      "  nmt train --config configs/multi30k_en_de.json --set train.name=x --print-config\n");
  add_config_options(options);
  options.add_options()(
      "resume", "continue the run in RUN_DIR from its last.pt (its config.json, then --set)",
      cxxopts::value<std::string>(),
      "RUN_DIR")("init-from",
                 "fine-tune: a new run (--config) that starts from the weights and tokenizer of "
                 "RUN_DIR (its averaged.pt, else best.pt, else last.pt) or a checkpoint file",
                 cxxopts::value<std::string>(),
                 "PATH")("device", "auto | cpu | cuda | cuda:N (overrides train.device)",
                         cxxopts::value<std::string>())(
      "print-config",
      "print the config this would train with (after --set; train.run_dir resolved; \"auto\" "
      "keys sized, with the reasons under \"auto\") as JSON and exit without training");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  const bool resume = args.count("resume") > 0;
  if (resume && args.count("config")) {
    throw Error("--resume RUN_DIR takes the run's own config.json: drop --config (use --set)");
  }
  if (resume && args.count("init-from")) {
    throw Error(
        "--init-from starts a new run from a trained model, --resume continues a run: "
        "give one of them");
  }
  const std::filesystem::path init_from =
      args.count("init-from") ? args["init-from"].as<std::string>() : std::string();
  Config config =
      resume ? resumed_config(args["resume"].as<std::string>(), args) : config_from_args(args);
  if (args.count("device"))
    apply_overrides(config, {"train.device=" + args["device"].as<std::string>()});
  // Before "auto" times training steps: --print-config sizes them as training would.
  tune_for_training(config);
  if (args.count("print-config")) {
    if (!resume) resolve_auto(config);  // the "auto" keys sized, with their reasons
    for (const auto& warning : config.auto_warnings) std::cerr << warning << "\n";
    config.train.run_dir = config.train.resolved_run_dir().string();
    std::cout << config_to_json(config).dump(2) << "\n";
    return 0;
  }
  install_interrupt_handlers();
  // torchrun and other launchers describe the process's rank in the environment.
  const DistEnv dist = parse_dist_env([](const char* name) { return std::getenv(name); });
  Trainer trainer(config, resume, std::cout, init_from, dist);
  const TrainSummary summary = trainer.run();
  if (!summary.error.empty()) {  // the log's last line has the numbers and how to resume
    throw Error("training stopped past train.max_memory_gb; state saved to " +
                (summary.run_dir / "last.pt").string());
  }
  return summary.interrupted ? 130 : 0;
}

const bool registered_train =
    register_command({"train", "train a model (new run or --resume)", run_train, 20});

}  // namespace
}  // namespace nmt::cli
