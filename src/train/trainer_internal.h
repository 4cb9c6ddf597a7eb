#pragma once

// Private to the Trainer's implementation files. The parts, each in its own file:
//   trainer.cpp             the run's set-up: directory, lock, resume, parent model (Impl's
//                           constructor), and what writes a checkpoint;
//   trainer_data.cpp        TrainingData: the training pairs, epoch by epoch;
//   trainer_step.cpp        TrainStep: one optimizer step (workers, the sums over the ranks);
//   trainer_validation.cpp  RunValidation: the validation sets and validators (validation.h),
//                           reported by one ValidationRecorder (validation_recorder.h);
//   trainer_loop.cpp        Trainer::Impl::run: epochs, steps, logging, validation, stopping.

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

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
#include "train/loss.h"
#include "train/resume.h"
#include "train/run_log.h"
#include "train/scheduler.h"
#include "train/snapshots.h"
#include "train/trainer.h"
#include "train/validation.h"

namespace nmt {

using Clock = std::chrono::steady_clock;

/// What every part of a run reads: its config, directory, device, ranks, logs and tokenizer.
/// The set-up fills it in (trainer.cpp); the parts only read it.
struct RunEnv {
  /// The config as the run uses it, and the device of this process (`dist`: its rank).
  RunEnv(Config run_config, const DistEnv& dist);

  Config config;
  std::filesystem::path dir;
  at::Device device;
  std::unique_ptr<WorldComm> comm;   ///< the other ranks (a no-op for one process)
  std::ostream quiet{nullptr};       ///< ranks other than 0 log nowhere
  std::unique_ptr<RunDirLock> lock;  ///< held while this Trainer may write into `dir`
  std::unique_ptr<RunLog> log;
  std::optional<Tokenizer> tokenizer;
  int64_t processes_on_host = 1;  ///< LOCAL_WORLD_SIZE: the ranks sharing this machine's memory
};

/// The run's clock.
struct RunClock {
  Clock::time_point constructed = Clock::now();  ///< the Trainer's start (start-up times)
  Clock::time_point run_start = Clock::now();
  double seconds_before = 0.0;  ///< train_seconds restored from a checkpoint
  double agreed = 0.0;          ///< several processes: rank 0's elapsed() at the last step

  /// The run's training time so far: restored seconds plus this process's wall clock.
  double elapsed() const {
    return seconds_before + std::chrono::duration<double>(Clock::now() - run_start).count();
  }
  static double since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

/// What one optimizer step did, summed over the ranks.
struct StepStats {
  double loss_sum = 0.0;      ///< label-smoothed loss summed over target tokens
  double nll_sum = 0.0;       ///< plain NLL summed over target tokens
  int64_t tokens = 0;         ///< target tokens of the step (every rank's batches)
  double flops = 0.0;         ///< executed model FLOPs (train/flops.h)
  double lr = 0.0;            ///< the learning rate it stepped with
  double comm_seconds = 0.0;  ///< several processes: time in the step's collectives
};

/// Running sums of the steps: since the last log line, and over this process's run (validation
/// excluded; the summary's throughput).
struct StepTotals {
  int64_t steps = 0;
  int64_t tokens = 0;
  double loss_sum = 0.0;
  double nll_sum = 0.0;
  double seconds = 0.0;  ///< time spent in training steps
  double flops = 0.0;
  double comm_seconds = 0.0;

  void add(const StepStats& step, double step_seconds) {
    steps += 1;
    tokens += step.tokens;
    loss_sum += step.loss_sum;
    nll_sum += step.nll_sum;
    seconds += step_seconds;
    flops += step.flops;
    comm_seconds += step.comm_seconds;
  }
};

/// The training pairs epoch by epoch: the run's encoded corpus file (data/encoded_corpus.h),
/// or under subword sampling or augmentation the text re-segmented each epoch, and with
/// weighted corpora each epoch's mix (data/mixing.h).
class TrainingData {
 public:
  /// `env` must outlive it.
  explicit TrainingData(const RunEnv& env) : env_(env) {}

  /// Rank 0 prepares (or reuses) the run's encoded corpus file, the other ranks map rank 0's;
  /// under subword sampling (every rank reads the text) nothing.
  void prepare();
  /// Under subword sampling the text; the sampling temperature; checks the mix; logs the
  /// statistics.
  void load();
  /// Makes epoch `epoch`'s pairs (re-segmented, remixed) and says what it did.
  void begin_epoch(int64_t epoch);
  /// The pairs this epoch's batches index: the corpus's, or the epoch's re-segmented ones, all
  /// of them or the rows of the epoch's mix.
  PairsView pairs() const;
  const FilterStats& stats() const { return train_.stats; }

  int64_t epoch_batches = 0;  ///< batches in the current epoch (for budget progress)

 private:
  void resample(int64_t epoch);
  void remix(int64_t epoch);

  const RunEnv& env_;
  TrainCorpus train_;  ///< memory-mapped (data/encoded_corpus.h); no pairs under subword sampling
  /// Under subword sampling (data.subword_alpha > 0) only: the training text and its best
  /// segmentation, which every epoch re-segments (docs/scaling.md).
  std::optional<EncodedSplit> text_;
  PairStore sampled_;           ///< this epoch's text_ (subword sampling, data.augment)
  std::vector<size_t> mixed_;   ///< this epoch's rows of weighted corpora (data/mixing.h)
  bool mix_described_ = false;  ///< the corpus mix has been logged
};

/// Loss sums of one batch (train.label_smoothing, R-Drop with train.rdrop_alpha > 0) in
/// train.precision: only non-padding target positions reach the output projection (a third of a
/// Multi30k batch's positions can be padding; the projection is the widest matmul). With R-Drop
/// the batch is stacked on itself, so one pass gives each sentence two dropout masks; the sums are
/// (both copies' cross-entropy + alpha * symmetric KL) / 2, as in Liang et al. 2021, so that
/// divided by the batch's target tokens they stay per-token means comparable with a run without.
LossSums batch_loss(Seq2Seq& model, const Batch& batch, const TrainConfig& config,
                    const at::Device& device);

/// The model and one optimizer step: the step's batches cut into shards for this rank's
/// workers, forward and backward, the sums over the ranks, clipping and the update.
class TrainStep {
 public:
  /// `env` must outlive it.
  explicit TrainStep(const RunEnv& env) : env_(env) {}

  /// One optimizer step over `group`, the step's batches of all ranks (this rank takes its
  /// accum_steps of them) drawn from `data`; `state` is the state before it, `clock` the run's
  /// (several processes: its agreed time is set here).
  StepStats run(const std::vector<std::vector<size_t>>& group, const TrainingData& data,
                const TrainingState& state, RunClock& clock);

  Seq2Seq model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<WorkerPool> workers;  ///< train.cpu_workers > 1 on the CPU, else null
  std::unique_ptr<WeightEma> ema;       ///< train.ema_decay > 0 (rank 0), else null

 private:
  /// Sums the gradients and `sums` (loss, nll, flops; rank 0's clock) over the ranks, in
  /// place; rank 0's clock goes to clock.agreed. Returns the seconds it took.
  double reduce(std::vector<double>& sums, int64_t step, RunClock& clock);

  const RunEnv& env_;
};

/// The run's validation: data.valid (one set per pair) and train.monitor_splits, measured by
/// the validators train.* asks for (validation.h) and reported by one ValidationRecorder.
class RunValidation {
 public:
  /// `env` must outlive it.
  explicit RunValidation(const RunEnv& env)
      : env_(env), validators_(make_validators(env.config.train)) {}

  /// Loads the sets and logs their statistics (every rank: the sizes are checked everywhere).
  void load();
  const std::vector<ValidationSet>& sets() const { return sets_; }

  /// Validates `model` on every set and, with `monitors`, on the monitor splits.
  struct Report {
    ValidationSummary summary;
    std::vector<Scores> monitors;  ///< one per monitor split
  };
  Report measure(Seq2Seq& model, bool monitors) const;
  /// Writes the report's record (`record` holds its kind, step and own fields) and log line.
  void record(nlohmann::json record, const std::string& head, const Report& report,
              const std::string& tail) const;

  int64_t last_step = -1;           ///< step of the latest validation
  double last_loss = std::nan("");  ///< that validation's loss

 private:
  const RunEnv& env_;
  Validators validators_;
  std::vector<ValidationSet> sets_;      ///< data.valid, one per pair (core/languages.h)
  std::vector<ValidationSet> monitors_;  ///< train.monitor_splits, one per pair
};

/// The Trainer's loop over its parts (trainer.h describes what it does).
class Trainer::Impl {
 public:
  Impl(Config config, bool resume, std::ostream& console, const std::filesystem::path& init_from,
       const DistEnv& dist);
  TrainSummary run(bool final_validation);
  const Config& config() const { return env_.config; }

 private:
  // The set-up (trainer.cpp).
  /// Loads the --init-from parent (every rank) and adopts its config.
  std::unique_ptr<Parent> load_and_adopt_parent(const std::filesystem::path& init_from);
  /// Rank 0: the parent's tokenizer files, parent.json and a log line into the run directory.
  void write_parent_files(const Parent& parent);
  /// Rank 0's start: checks, locks and tidies the run directory, opens the logs, writes the
  /// parent's tokenizer and record (fine-tuning), prepares the tokenizer; returns what tidying
  /// found. Other ranks wait for it (join_prepared_run).
  RunDirReport prepare_run_dir(bool resume, std::ostream& console, const Parent* parent);
  void join_prepared_run();
  /// Refuses too little data (train.allow_small_data) with the numbers.
  void check_data_size() const;
  /// The model and optimizer: new, a parent's (--init-from) or last.pt's (a resume, where
  /// `rewrite_best` repairs best.pt from it), and the moving average (train.ema_decay).
  void set_up_model(bool resume, const Parent* parent, bool rewrite_best);
  /// After set-up: rank 0's parameters everywhere, the ranks' data and model compared, and a
  /// resume on another number of processes explained in the log.
  void synchronise_ranks(int64_t trained_on);
  /// Logs what tidy_run_dir found and discarded (`last`: the resumed state; null: a new run).
  void log_tidy_report(const RunDirReport& report, const TrainingState* last);
  /// A checkpoint of the weights to decode with: with train.ema_decay the average (train/ema.h),
  /// plus the training weights when `with_optimizer` (training may resume from it).
  void save(const std::filesystem::path& path, bool with_optimizer);
  /// A snapshot for the final average: the training weights as they are, no optimizer.
  void save_snapshot(const std::filesystem::path& path);
  /// Writes the model as it is now, the training state, `training_weights` (train/ema.h) and
  /// (`with_optimizer`) Adam's.
  void write_checkpoint(const std::filesystem::path& path, bool with_optimizer,
                        const std::vector<at::Tensor>& training_weights);

  // The loop (trainer_loop.cpp).
  void train_epoch(TrainSummary& summary);
  /// After a step: the log line and record, snapshots, validation, stopping.
  void after_step(TrainSummary& summary, const StepStats& step);
  /// Every rank stops if one was interrupted or rank 0 decided to stop (a no-op for one process).
  void agree_stop(TrainSummary& summary);
  /// Stops on SIGINT/SIGTERM or a limit (agreed over the ranks): after every step and epoch.
  void check_stop(TrainSummary& summary);
  bool limit_reached(TrainSummary& summary);
  /// At a log point: hands the allocator's free pages back when it holds much (core/memory.h),
  /// and stops the run, saving it, past train.max_memory_gb. Returns the resident and heap
  /// bytes for the train record.
  std::pair<int64_t, int64_t> check_memory(TrainSummary& summary);
  /// Validates, logs, and saves best.pt, step_<step>.pt and last.pt. `final`: the run's end.
  void run_validation(TrainSummary& summary, bool final = false);
  /// After a validation: step_<step>.pt (if kept), last.pt, best.pt (if `best`), then rotation.
  void save_validation_checkpoints(bool best, bool final);
  /// The fraction of the budget used after the step just taken (train/schedule.h).
  double progress() const;
  /// Epochs done, with the current epoch's fraction.
  double epochs_done() const;
  /// Rank 0 at the run's end: averages the snapshots into averaged.pt and validates it.
  void write_average(const TrainSummary& summary);

  RunEnv env_;
  TrainingData data_;
  RunValidation validation_;
  TrainStep step_;
  TrainingState state_;
  RunClock clock_;
  StepTotals window_;        ///< the steps since the last log line
  StepTotals totals_;        ///< this process's steps over the run
  Scheduler scheduler_;      ///< when to validate and stop
  CheckpointKeeper keeper_;  ///< writes and rotates the checkpoints
  SnapshotPlan snapshots_;   ///< the final average's snapshots (rank 0 writes)
  bool stop_ = false;
};

}  // namespace nmt
