#include "train/checkpoint_keeper.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/files.h"

namespace nmt {
namespace fs = std::filesystem;

CheckpointKeeper::CheckpointKeeper(fs::path run_dir, int64_t keep, SaveFn save)
    : run_dir_(std::move(run_dir)), keep_(keep), save_(std::move(save)) {}

void CheckpointKeeper::after_validation(int64_t step, bool best, int64_t replace_within) {
  // Order matters for a kill between two writes: last.pt is the commit point. A step_N.pt
  // written before it is beyond last.pt and discarded by a resume; a best.pt not yet written
  // after it is rewritten by the resume from last.pt's weights (the same); the old step
  // checkpoints are removed only once both are in place.
  if (keep_ > 0) save_(run_dir_ / ("step_" + std::to_string(step) + ".pt"), false);
  save_last();
  if (best) save_best();
  if (keep_ > 0) rotate(step, replace_within);
}

void CheckpointKeeper::rotate(int64_t step, int64_t replace_within) const {
  std::vector<std::pair<int64_t, fs::path>> kept;
  for (auto& checkpoint : numbered_files(run_dir_, "step")) {
    if (checkpoint.first < step && checkpoint.first > step - replace_within) {
      fs::remove(checkpoint.second);
    } else {
      kept.push_back(std::move(checkpoint));
    }
  }
  for (size_t i = 0; i + size_t(keep_) < kept.size(); ++i) fs::remove(kept[i].second);
}

}  // namespace nmt
