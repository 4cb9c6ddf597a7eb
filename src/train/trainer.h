#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <torch/optim/optimizer.h>

#include "core/config.h"
#include "core/run_lock.h"
#include "data/dataset.h"
#include "data/encoded_corpus.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/distributed.h"
#include "train/finetune.h"
#include "train/resume.h"
#include "train/run_log.h"
#include "train/validation.h"

namespace nmt {

/// How a training run ended.
struct TrainSummary {
  std::filesystem::path run_dir;
  int64_t steps = 0;               ///< optimizer steps done in total
  int64_t epochs_done = 0;         ///< complete epochs
  double best_metric = 0.0;        ///< best validation metric (NaN if never validated)
  bool interrupted = false;        ///< stopped by SIGINT/SIGTERM (last.pt holds the state)
  std::string stop_reason;         ///< e.g. "max_epochs reached", "early stopping", "interrupted"
  double tokens_per_second = 0.0;  ///< target tokens per second of training steps (this run)
  double flops_per_second = 0.0;   ///< executed model FLOP/s of those steps (train/flops.h)
};

/// Trains a Seq2Seq model as configured, leaving a run directory with config.json, the
/// tokenizer model(s), last.pt / best.pt / step_N.pt checkpoints, metrics.jsonl and train.log.
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

  /// Runs until a limit, early stopping or an interrupt; returns how it ended. A non-finite
  /// loss is an nmt::Error (the last good checkpoint stays in place). A run stopped by a limit
  /// validates its final weights unless `final_validation` is false (benchmarks).
  TrainSummary run(bool final_validation = true);

  const Config& config() const { return config_; }
  Seq2Seq& model() { return model_; }

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
  void set_up_model(bool resume, const Parent* parent);
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
  void resample_subwords();
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
  void save(const std::filesystem::path& path, bool with_optimizer);
  /// After a validation: step_<step>.pt (if kept), last.pt, best.pt (if `best`), then rotation.
  void save_validation_checkpoints(bool best, bool final);
  /// Logs what tidy_run_dir found and discarded (`last`: the resumed state; null: a new run).
  void log_tidy_report(const RunDirReport& report, const TrainingState* last);
  /// Keeps the newest train.keep_checkpoints step checkpoints; first removes those fewer than
  /// `replace_within` steps older than the current step (0: none).
  void rotate_step_checkpoints(int64_t replace_within = 0);
  bool limit_reached(TrainSummary& summary);
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
  PairStore sampled_;           ///< this epoch's re-segmented train_text_ (subword sampling)
  std::vector<size_t> mixed_;   ///< this epoch's rows of weighted corpora (data/mixing.h)
  bool mix_described_ = false;  ///< the corpus mix has been logged
  EncodedSplit valid_;
  std::vector<std::pair<std::string, EncodedSplit>> monitors_;  ///< train.monitor_splits
  Seq2Seq model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<WorkerPool> workers_;  ///< train.cpu_workers > 1 on the CPU, else null
  TrainingState state_;
  struct Window;  // running statistics between log lines
  std::unique_ptr<Window> window_;
  bool stop_ = false;
};

}  // namespace nmt
