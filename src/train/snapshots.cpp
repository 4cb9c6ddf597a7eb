#include "train/snapshots.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/files.h"
#include "train/checkpoint.h"
#include "train/schedule.h"

namespace nmt {
namespace fs = std::filesystem;

namespace {

/// The snapshot files in `run_dir` with their steps, in step order.
std::vector<std::pair<int64_t, fs::path>> snapshot_files(const fs::path& run_dir) {
  return numbered_files(run_dir, "snapshot");
}

}  // namespace

SnapshotPlan::SnapshotPlan(fs::path run_dir, const TrainConfig& config)
    : run_dir_(std::move(run_dir)), config_(config) {}

double SnapshotPlan::due_at(int64_t k) const {
  const int64_t n = config_.average_snapshots;
  return 1.0 - config_.average_window * double(n - k) / double(n);
}

std::string SnapshotPlan::start(int64_t step, double progress) {
  next_ = 1;
  while (enabled() && next_ <= config_.average_snapshots && progress >= due_at(next_)) ++next_;
  std::vector<std::string> removed;
  for (const auto& [snapshot_step, file] : snapshot_files(run_dir_)) {
    bool stale = snapshot_step > step || !enabled();
    if (!stale) {
      const TrainingState state = read_checkpoint_state(file);
      const double epochs =
          state.epochs_done >= 0.0 ? state.epochs_done : double(state.epoch);  // older snapshots
      // A snapshot taken before the window as the budget now is.
      stale = budget_progress(config_, state.step, state.train_seconds, epochs) < due_at(1) - 1e-9;
    }
    if (stale) {
      fs::remove(file);
      removed.push_back(file.filename().string());
    }
  }
  if (progress < 1.0 && fs::exists(run_dir_ / "averaged.pt")) {
    fs::remove(run_dir_ / "averaged.pt");
    removed.push_back("averaged.pt (the run trains further)");
  }
  if (removed.empty()) return "";
  std::string text = "removed what lies outside the averaging window (train.average_window):";
  for (const auto& name : removed) text += " " + name;
  return text;
}

bool SnapshotPlan::take(double progress) {
  if (!enabled() || next_ > config_.average_snapshots || progress < due_at(next_)) return false;
  // One snapshot per step, even where a slow step passes two points.
  while (next_ <= config_.average_snapshots && progress >= due_at(next_)) ++next_;
  return true;
}

fs::path SnapshotPlan::path(int64_t step) const {
  return run_dir_ / ("snapshot_" + std::to_string(step) + ".pt");
}

std::vector<fs::path> SnapshotPlan::files() const {
  std::vector<fs::path> paths;
  for (auto& entry : snapshot_files(run_dir_)) paths.push_back(std::move(entry.second));
  return paths;
}

std::string SnapshotPlan::describe() const {
  if (!enabled()) return "no averaging (train.average_snapshots or train.average_window is 0)";
  return std::to_string(config_.average_snapshots) + " snapshot(s) over the last " +
         std::to_string(int(std::lround(100.0 * config_.average_window))) +
         "% of the budget, averaged into averaged.pt";
}

}  // namespace nmt
