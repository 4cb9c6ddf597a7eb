#pragma once

// Private to the Trainer's implementation files (trainer.cpp, trainer_step.cpp,
// trainer_loop.cpp).

#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "core/progress.h"
#include "core/run_lock.h"
#include "data/dataset.h"
#include "data/encoded_corpus.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
#include "train/checkpoint.h"
#include "train/checkpoint_keeper.h"
#include "train/data_parallel.h"
#include "train/distributed.h"
#include "train/ema.h"
#include "train/finetune.h"
#include "train/resume.h"
#include "train/run_log.h"
#include "train/scheduler.h"
#include "train/snapshots.h"
#include "train/trainer.h"
#include "train/validation.h"

namespace nmt {

using Clock = std::chrono::steady_clock;

/// Running sums between two log lines, and the run's clock.
struct TrainWindow {
  double loss_sum = 0.0;  ///< label-smoothed loss summed over tokens
  double nll_sum = 0.0;   ///< plain NLL summed over tokens
  int64_t tokens = 0;
  double seconds = 0.0;  ///< time spent in training steps
  Clock::time_point run_start = Clock::now();
  Clock::time_point constructed = Clock::now();  ///< the Trainer's start (start-up times)
  double seconds_before = 0.0;                   ///< train_seconds restored from a checkpoint
  int64_t last_validated = -1;                   ///< step of the latest validation
  double last_valid_loss = std::nan("");         ///< that validation's loss
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

/// The Trainer's state and steps (trainer.h describes what it does).
class Trainer::Impl {
 public:
  Impl(Config config, bool resume, std::ostream& console, const std::filesystem::path& init_from,
       const DistEnv& dist);
  TrainSummary run(bool final_validation);
  const Config& config() const { return config_; }

 private:
  /// Loads the --init-from parent (every rank) and adopts its config.
  std::unique_ptr<Parent> load_and_adopt_parent(const std::filesystem::path& init_from);
  /// Rank 0: the parent's tokenizer files, parent.json and a log line into the run directory.
  void write_parent_files(const Parent& parent);
  /// Rank 0's start: checks, locks and tidies the run directory, opens the logs, writes the
  /// parent's tokenizer and record (fine-tuning), prepares the tokenizer; returns what tidying
  /// found. Other ranks wait for it (join_prepared_run).
  RunDirReport prepare_run_dir(bool resume, std::ostream& console, const Parent* parent);
  void join_prepared_run();
  /// Loads data.train, data.valid and train.monitor_splits and logs their statistics.
  void load_data();
  /// Refuses too little data (train.allow_small_data) with the numbers.
  void check_data_size() const;
  /// The model and optimizer: new, a parent's (--init-from) or last.pt's (a resume, where
  /// `rewrite_best` repairs best.pt from it), and the moving average (train.ema_decay).
  void set_up_model(bool resume, const Parent* parent, bool rewrite_best);
  /// After set-up: rank 0's parameters everywhere, the ranks' data and model compared, and a
  /// resume on another number of processes explained in the log.
  void synchronise_ranks(int64_t trained_on);
  /// Every rank stops if one was interrupted or rank 0 decided to stop (a no-op for one process).
  void agree_stop(TrainSummary& summary);
  void train_epoch(TrainSummary& summary);
  /// The pairs this epoch's batches index: train_'s, or sampled_ under subword sampling, all
  /// of them or the rows mixed_ draws (weighted corpora).
  PairsView epoch_pairs() const;
  /// The training corpus: rank 0 prepares (or reuses) the run's encoded corpus file, the other
  /// ranks map rank 0's; under subword sampling every rank reads the text (load_data).
  void prepare_train_corpus();
  /// Re-segments the training split for the epoch under way (data.subword_alpha > 0).
  void resample_epoch();
  /// Draws the epoch under way's mix of weighted corpora (data/mixing.h) into mixed_.
  void remix();
  /// One optimizer step over `group`, the step's batches of all ranks (this rank takes its
  /// accum_steps of them); returns the step's mean loss per target token over all ranks.
  double train_step(const std::vector<std::vector<size_t>>& group);
  /// Sums the gradients and the step's statistics (`sums`: loss, nll, flops; rank 0's clock)
  /// over the ranks, in place; rank 0's clock goes to window_->agreed_elapsed.
  void reduce_step(std::vector<double>& sums);
  void after_step(TrainSummary& summary, double loss);
  /// Stops on SIGINT/SIGTERM or a limit (agreed over the ranks): after every step and epoch.
  void check_stop(TrainSummary& summary);
  /// Validates, logs, and saves best.pt, step_<step>.pt and last.pt. `final`: the run's end.
  void run_validation(TrainSummary& summary, bool final = false);
  /// A checkpoint of the weights to decode with: with train.ema_decay the average (train/ema.h),
  /// plus the training weights when `with_optimizer` (training may resume from it).
  void save(const std::filesystem::path& path, bool with_optimizer);
  /// A snapshot for the final average: the training weights as they are, no optimizer.
  void save_snapshot(const std::filesystem::path& path);
  /// Writes the model as it is now, the training state, `training_weights` (train/ema.h) and
  /// (`with_optimizer`) Adam's.
  void write_checkpoint(const std::filesystem::path& path, bool with_optimizer,
                        const std::vector<at::Tensor>& training_weights);
  /// After a validation: step_<step>.pt (if kept), last.pt, best.pt (if `best`), then rotation.
  void save_validation_checkpoints(bool best, bool final);
  /// Logs what tidy_run_dir found and discarded (`last`: the resumed state; null: a new run).
  void log_tidy_report(const RunDirReport& report, const TrainingState* last);
  bool limit_reached(TrainSummary& summary);
  /// The fraction of the budget used after the step just taken (train/schedule.h).
  double progress() const;
  /// Epochs done, with the current epoch's fraction.
  double epochs_done() const;
  /// Rank 0 at the run's end: averages the snapshots into averaged.pt and validates it.
  void write_average(const TrainSummary& summary);
  void say(const std::string& text);  ///< a log line that does not garble the progress bar

  Config config_;
  std::unique_ptr<WorldComm> comm_;  ///< the other ranks (a no-op for one process)
  std::ostream quiet_{nullptr};      ///< ranks other than 0 log nowhere
  std::filesystem::path run_dir_;
  std::unique_ptr<RunDirLock> lock_;  ///< held while this Trainer may write into run_dir_
  at::Device device_;
  std::unique_ptr<RunLog> log_;
  std::optional<Tokenizer> tokenizer_;
  TrainCorpus train_;  ///< memory-mapped (data/encoded_corpus.h); no pairs under subword sampling
  /// Under subword sampling (data.subword_alpha > 0) only: the training text and its best
  /// segmentation, which every epoch re-segments (docs/scaling.md).
  std::optional<EncodedSplit> train_text_;
  PairStore sampled_;           ///< this epoch's train_text_ (subword sampling, data.augment)
  std::vector<size_t> mixed_;   ///< this epoch's rows of weighted corpora (data/mixing.h)
  bool mix_described_ = false;  ///< the corpus mix has been logged
  std::vector<ValidationSet> valids_;    ///< data.valid, one per pair (core/languages.h)
  std::vector<ValidationSet> monitors_;  ///< train.monitor_splits, one per pair
  Seq2Seq model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<WorkerPool> workers_;  ///< train.cpu_workers > 1 on the CPU, else null
  std::unique_ptr<WeightEma> ema_;       ///< train.ema_decay > 0, else null
  TrainingState state_;
  std::unique_ptr<TrainWindow> window_;  ///< running statistics between log lines
  Scheduler scheduler_;                  ///< when to validate and stop
  CheckpointKeeper keeper_;              ///< writes and rotates the checkpoints
  SnapshotPlan snapshots_;               ///< the final average's snapshots (rank 0 writes)
  bool stop_ = false;
};

/// `value` with `digits` decimals, for the trainer's log lines.
std::string fixed(double value, int digits);

}  // namespace nmt
