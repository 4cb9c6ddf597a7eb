#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

/// The run's final average that follows the training, not a count of checkpoints:
/// train.average_snapshots snapshots of the weights, evenly spaced over the last
/// train.average_window of the run's budget (its step, time or epoch limit, as the learning-rate
/// schedule reads it: budget_progress), the last one at the budget's end. Snapshot k of n is due
/// once the budget is 1 − window · (n − k) / n used. A snapshot is a checkpoint without the
/// optimizer, snapshot_<step>.pt; when the run ends the Trainer averages them into averaged.pt.
/// Because the window is a part of the budget, a short or slow run never averages early weights
/// in (a count of step checkpoints covers most of a run that validated only a dozen times).
class SnapshotPlan {
 public:
  /// `config` must outlive the plan (the Trainer's own config).
  SnapshotPlan(std::filesystem::path run_dir, const TrainConfig& config);
  SnapshotPlan(std::filesystem::path run_dir, TrainConfig&& config) = delete;  // would dangle

  bool enabled() const { return config_.average_snapshots > 0 && config_.average_window > 0.0; }

  /// The budget fraction at which snapshot `k` (1-based, ≤ average_snapshots) is due.
  double due_at(int64_t k) const;

  /// Start-up (a new run or a resume at `step`, `progress` of the budget used): removes snapshot
  /// files beyond `step` (written after the last.pt a resume starts from; they are taken again)
  /// and those that lie before the window as the budget now is (a resume that raised a limit),
  /// and a stale averaged.pt when the run will train further. Returns a log line saying what it
  /// removed, or "".
  std::string start(int64_t step, double progress);

  /// Whether a snapshot is due at `progress` (call after every optimizer step); marks it taken.
  bool take(double progress);

  /// The snapshot file for the weights at `step`.
  std::filesystem::path path(int64_t step) const;

  /// The run's snapshot files, in step order.
  std::vector<std::filesystem::path> files() const;

  /// "8 snapshots over the last 30% of the budget" (for the log).
  std::string describe() const;

 private:
  std::filesystem::path run_dir_;
  const TrainConfig& config_;
  int64_t next_ = 1;  ///< the next snapshot due (1-based)
};

}  // namespace nmt
