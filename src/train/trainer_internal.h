#pragma once

// Private to the Trainer's implementation files (trainer.cpp, trainer_loop.cpp).

#include <chrono>
#include <memory>
#include <string>

#include "core/progress.h"
#include "train/trainer.h"

namespace nmt {

using Clock = std::chrono::steady_clock;

/// Running sums between two log lines, and the run's clock.
struct Trainer::Window {
  double loss_sum = 0.0;  ///< label-smoothed loss summed over tokens
  double nll_sum = 0.0;   ///< plain NLL summed over tokens
  int64_t tokens = 0;
  double seconds = 0.0;  ///< time spent in training steps
  Clock::time_point run_start = Clock::now();
  Clock::time_point constructed = Clock::now();  ///< the Trainer's start (start-up times)
  double seconds_before = 0.0;                   ///< train_seconds restored from a checkpoint
  int64_t last_validated = -1;                   ///< step of the latest validation
  std::unique_ptr<ProgressBar> bar;              ///< this epoch's bar (terminal only)
  int64_t epoch_batches = 0;    ///< batches in the current epoch (for budget progress)
  double lr = 0.0;              ///< learning rate of the latest step
  double agreed_elapsed = 0.0;  ///< several processes: rank 0's elapsed() at the last step
  // Throughput of this process's training steps (validation excluded), for the summary.
  int64_t run_tokens = 0;
  double run_seconds = 0.0;
  double run_flops = 0.0;
  double run_comm_seconds = 0.0;  ///< several processes: time in the step's collectives
  int64_t run_steps = 0;          ///< optimizer steps taken by this process

  /// The run's training time so far: restored seconds plus this process's wall clock.
  double elapsed() const {
    return seconds_before + std::chrono::duration<double>(Clock::now() - run_start).count();
  }
};

/// `value` with `digits` decimals, for the trainer's log lines.
std::string fixed(double value, int digits);

}  // namespace nmt
