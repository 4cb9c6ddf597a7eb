#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "core/config.h"
#include "train/distributed.h"

namespace nmt {

/// How a training run ended.
struct TrainSummary {
  std::filesystem::path run_dir;
  int64_t steps = 0;         ///< optimizer steps done in total
  int64_t epochs_done = 0;   ///< complete epochs
  double best_metric = 0.0;  ///< best validation metric (NaN if never validated)
  bool interrupted = false;  ///< stopped by SIGINT/SIGTERM (last.pt holds the state)
  /// Why the run stopped short with an error (train.max_memory_gb passed), as the log's last
  /// line gives it; last.pt holds the state, and `nmt train` exits 2.
  std::string error;
  std::string stop_reason;         ///< e.g. "max_epochs reached", "early stopping", "interrupted"
  double tokens_per_second = 0.0;  ///< target tokens per second of training steps (this run)
  double flops_per_second = 0.0;   ///< executed model FLOP/s of those steps (train/flops.h)
};

/// Trains a Seq2Seq model as configured, leaving a run directory with config.json, the
/// tokenizer model(s), last.pt / best.pt / step_N.pt checkpoints, metrics.jsonl and train.log.
///
/// The parts (trainer_internal.h lists their files): the set-up fills a RunEnv; TrainingData
/// gives each epoch's pairs; TrainStep takes one optimizer step; RunValidation measures with the
/// run's validators (validation.h) and reports through one ValidationRecorder; Trainer::Impl
/// loops over them. A Scheduler (scheduler.h) decides when to validate and stop; a
/// CheckpointKeeper (checkpoint_keeper.h) writes and rotates checkpoints.
class Trainer {
 public:
  /// Prepares a new run in config.train.resolved_run_dir(), or with `resume` continues the run
  /// found there from its last.pt. Starting anew over an existing run is an error (never
  /// overwrites work); resuming with different model/data settings is an error naming the key.
  /// A new run with `init_from` (a run directory or checkpoint) fine-tunes it (train/finetune.h):
  /// its tokenizer and weights, fresh training state. With `dist` describing several processes
  /// (parse_dist_env) this process trains as one rank of them (docs/distributed.md): rank 0
  /// alone prepares the run directory, validates and writes; every rank must be started with the
  /// same config.
  Trainer(Config config, bool resume, std::ostream& console,
          const std::filesystem::path& init_from = {}, const DistEnv& dist = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Runs until a limit, early stopping or an interrupt; returns how it ended. A non-finite
  /// loss is an nmt::Error (the last good checkpoint stays in place). A run stopped by a limit
  /// validates its final weights unless `final_validation` is false (benchmarks).
  TrainSummary run(bool final_validation = true);

  /// The run's config, with the vocabulary sizes of its tokenizer.
  const Config& config() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt
