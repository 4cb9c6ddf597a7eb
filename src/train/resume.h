#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "train/checkpoint.h"

namespace nmt {

/// What tidy_run_dir found in a run directory and what it discarded, for the run's log.
struct RunDirReport {
  std::vector<std::string> found;
  std::vector<std::string> discarded;
  /// best.pt does not hold the best weights `last` records, which are last.pt's own (the run
  /// was killed between writing last.pt and best.pt): the caller rewrites best.pt from them.
  bool rewrite_best = false;
};

/// Brings a run directory back to the point `last` (last.pt's state) describes, so that a
/// resumed run leaves one history (docs/fault_tolerance.md):
/// - removes stale temporary files (`*.tmp`, from a write that was cut short);
/// - removes step_N.pt with N beyond last's step (written before a kill that came before last.pt);
/// - cuts train.log and metrics.jsonl back to the sizes recorded in `last` (a checkpoint from
///   before those were recorded: drops the metrics records of later steps, keeps train.log);
/// - checks that best.pt holds the weights of last's best step, restoring it from step_B.pt
///   when it does not, or asking the caller to (rewrite_best).
/// For a new run in a directory without last.pt, pass a TrainingState with step = -1 and
/// log_bytes = metrics_bytes = 0: whatever a killed first attempt left is discarded.
RunDirReport tidy_run_dir(const std::filesystem::path& run_dir, const TrainingState& last);

}  // namespace nmt
