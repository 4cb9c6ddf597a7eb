#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"
#include "train/checkpoint.h"

namespace nmt {

/// When a run validates and when it stops (as Marian's Scheduler): the limits (train.max_steps,
/// max_minutes, max_epochs), train.validate_every, and early stopping on train.patience
/// validations without improving train.metric. Values in, decisions out: the Trainer keeps the
/// state (TrainingState, saved in checkpoints) and acts on them.
class Scheduler {
 public:
  /// `config` must outlive the Scheduler (the Trainer's own config).
  explicit Scheduler(const TrainConfig& config) : config_(config) {}

  /// Why the run should stop at `state` on a step or time limit ("max_steps reached",
  /// "max_minutes reached"), or "" when neither is reached.
  std::string limit_reached(const TrainingState& state) const;

  /// Whether every epoch of train.max_epochs is done (0: no epoch limit).
  bool epochs_done(const TrainingState& state) const;

  /// Whether the run validates after optimizer step `step` (train.validate_every > 0), or else
  /// at each epoch's end.
  bool validates_after_step(int64_t step) const;
  bool validates_at_epoch_end() const { return config_.validate_every == 0; }

  /// Optimizer steps between two validations: validate_every, or an epoch's steps when
  /// validating per epoch (`epoch_batches` batches, `batches_per_step` a step).
  int64_t validation_interval(int64_t epoch_batches, int64_t batches_per_step) const;

  /// What one validation decides.
  struct Verdict {
    bool best = false;        ///< the metric improved on state.best_metric
    std::string stop_reason;  ///< early stopping's reason, or ""
  };

  /// Records a validation at state.step with `metric` in `state` (best metric and step, bad
  /// validations since) and says whether it is the best and whether patience ran out.
  Verdict judge(double metric, TrainingState& state) const;

 private:
  const TrainConfig& config_;
};

}  // namespace nmt
