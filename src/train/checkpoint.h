#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>

#include "core/config.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"

namespace nmt {

/// Training progress stored in every checkpoint, enough to resume exactly.
struct TrainingState {
  int64_t step = 0;            ///< optimizer steps done
  int64_t epoch = 0;           ///< epoch in progress (0-based)
  int64_t batch_in_epoch = 0;  ///< batches of `epoch` already consumed
  double best_metric = std::numeric_limits<double>::quiet_NaN();  ///< best validation metric
  int64_t best_step = 0;                                          ///< step of the best validation
  int64_t bad_validations = 0;  ///< validations since the best (early stopping)
  double train_seconds = 0.0;   ///< training wall-clock so far (for train.max_minutes)
  int64_t world_size = 1;       ///< processes that trained it (a step is this × accum_steps)
  /// Epochs done, with the current one's fraction, when the state was saved (-1: not recorded).
  /// A snapshot keeps it so that a resume can place it in an epoch budget (train/snapshots.h):
  /// the epoch's size in batches is not saved.
  double epochs_done = -1.0;
  /// Sizes of the run's train.log and metrics.jsonl when the checkpoint was written (-1:
  /// unknown, an older checkpoint): a resume cuts the logs back to them (train/resume.h).
  int64_t log_bytes = -1;
  int64_t metrics_bytes = -1;
  at::Tensor rng_state;  ///< CPU generator state (dropout), restored on resume
  /// The training GPU's generator state (at::dropout there), restored on resume on a GPU;
  /// undefined for a run on the CPU.
  at::Tensor accelerator_rng_state;
  /// With train.ema_decay (train/ema.h) the model's weights are the average; a checkpoint that
  /// training may resume from also holds the weights training goes on from, in the order of
  /// model->parameters(). Written by save_checkpoint when not empty; load_checkpoint leaves it
  /// empty (a decode session needs no second copy): load_training_weights reads them.
  std::vector<at::Tensor> training_weights;

  /// The fields a checkpoint's metadata records as JSON (core/json_fields.h), each once.
  template <class F>
  void fields(F&& f) {
    f("step", step), f("epoch", epoch), f("batch_in_epoch", batch_in_epoch);
    f("best_metric", best_metric), f("best_step", best_step);
    f("bad_validations", bad_validations), f("train_seconds", train_seconds);
    f("world_size", world_size), f("epochs_done", epochs_done);
    f("log_bytes", log_bytes), f("metrics_bytes", metrics_bytes);
  }
};

/// A model ready to use, with everything it came with.
struct LoadedModel {
  Config config;  ///< the full config the model was trained with (vocab sizes set)
  Seq2Seq model{nullptr};
  Tokenizer tokenizer;
  TrainingState state;
};

/// Writes model weights, optimizer state (if given), training state, the config (JSON) and the
/// tokenizer model(s) into one file. Durable and atomic (core/files.h write_file_atomically):
/// `<path>.tmp`, fsync, rename, fsync of the directory, so a crash or power loss never leaves a
/// broken file at `path`; a failed write is an nmt::Error naming the file, `path` unchanged.
void save_checkpoint(const std::filesystem::path& path, const Config& config, Seq2Seq& model,
                     const Tokenizer& tokenizer, const TrainingState& state,
                     torch::optim::Optimizer* optimizer = nullptr);

/// Resolves a checkpoint argument: a file as is; a run directory to its averaged.pt (the run's
/// final average, train/snapshots.h), else best.pt, else last.pt.
/// Missing paths are an nmt::Error naming them.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

/// Loads a checkpoint (file or run directory) onto `device`. Corrupt or foreign files are an
/// nmt::Error naming the file. The model is left in eval() mode.
LoadedModel load_checkpoint(const std::filesystem::path& path, const at::Device& device);

/// The training state recorded in a checkpoint file (its metadata only; no model is built).
/// Corrupt or foreign files are an nmt::Error naming the file.
TrainingState read_checkpoint_state(const std::filesystem::path& path);

/// The training weights a checkpoint holds beside its model (TrainingState::training_weights),
/// on the devices of `parameters`, whose shapes they must have; empty when it holds none. A count
/// or shape that does not fit is an nmt::Error naming the file.
std::vector<at::Tensor> load_training_weights(const std::filesystem::path& path,
                                              const std::vector<at::Tensor>& parameters);

/// Restores the optimizer state saved with a checkpoint.
void load_optimizer_state(const std::filesystem::path& path, torch::optim::Optimizer& optimizer);

}  // namespace nmt
