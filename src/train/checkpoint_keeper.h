#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

namespace nmt {

/// Writes a run's checkpoints in the order that survives a kill between two writes, and keeps
/// the newest train.keep_checkpoints step checkpoints (docs/fault_tolerance.md). What goes into
/// a checkpoint is the Trainer's business: it hands in the function that writes one.
class CheckpointKeeper {
 public:
  /// Writes the run's state to a path, with the optimizer's state or without.
  using SaveFn = std::function<void(const std::filesystem::path& path, bool with_optimizer)>;

  /// `keep`: step checkpoints kept (0: none written).
  CheckpointKeeper(std::filesystem::path run_dir, int64_t keep, SaveFn save);

  /// After a validation at `step`: step_<step>.pt (if kept), last.pt, best.pt (if `best`), then
  /// rotation, which first removes step checkpoints fewer than `replace_within` steps older
  /// than `step` (0: none): final weights a few steps after a validation replace that one, so
  /// that averaging the last N does not count nearly the same weights twice.
  void after_validation(int64_t step, bool best, int64_t replace_within);

  /// last.pt alone (the run's end, an interrupt) or best.pt alone (a resume's repair).
  void save_last() const { save_(run_dir_ / "last.pt", /*with_optimizer=*/true); }
  void save_best() const { save_(run_dir_ / "best.pt", /*with_optimizer=*/false); }

  /// Keeps the newest `keep` step checkpoints; first removes those fewer than `replace_within`
  /// steps older than `step`.
  void rotate(int64_t step, int64_t replace_within = 0) const;

 private:
  std::filesystem::path run_dir_;
  int64_t keep_;
  SaveFn save_;
};

}  // namespace nmt
