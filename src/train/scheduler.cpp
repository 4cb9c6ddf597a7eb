#include "train/scheduler.h"

#include "train/validation.h"

namespace nmt {

std::string Scheduler::limit_reached(const TrainingState& state) const {
  // Both may hold; the time limit is named then, as it was checked last.
  std::string reason;
  if (config_.max_steps > 0 && state.step >= config_.max_steps) reason = "max_steps reached";
  if (config_.max_minutes > 0 && state.train_seconds >= 60.0 * config_.max_minutes) {
    reason = "max_minutes reached";
  }
  return reason;
}

bool Scheduler::epochs_done(const TrainingState& state) const {
  return config_.max_epochs > 0 && state.epoch >= config_.max_epochs;
}

bool Scheduler::validates_after_step(int64_t step) const {
  return config_.validate_every > 0 && step % config_.validate_every == 0;
}

int64_t Scheduler::validation_interval(int64_t epoch_batches, int64_t batches_per_step) const {
  if (config_.validate_every > 0) return config_.validate_every;
  return (epoch_batches + batches_per_step - 1) / batches_per_step;
}

Scheduler::Verdict Scheduler::judge(double metric, TrainingState& state) const {
  Verdict verdict;
  verdict.best = improves(config_.metric, metric, state.best_metric);
  if (verdict.best) {
    state.best_metric = metric;
    state.best_step = state.step;
    state.bad_validations = 0;
  } else if (++state.bad_validations >= config_.patience && config_.patience > 0) {
    verdict.stop_reason = "early stopping: no " + std::string(choice_name(config_.metric)) +
                          " improvement in " + std::to_string(config_.patience) + " validations";
  }
  return verdict;
}

}  // namespace nmt
