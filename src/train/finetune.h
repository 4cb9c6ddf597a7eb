#pragma once

#include <filesystem>
#include <string>

#include "core/config.h"
#include "train/checkpoint.h"

namespace nmt {

// Fine-tuning (nmt train --init-from): a new run that starts from a trained model's weights and
// tokenizer, on new data, with a fresh step, schedule, epoch and best metric (and, unless
// train.init_keep = optimizer, a fresh optimizer).

/// The parent a new run starts from.
struct Parent {
  std::filesystem::path checkpoint;  ///< the resolved checkpoint file
  LoadedModel loaded;
  uint64_t bytes = 0;  ///< size of the checkpoint file
  std::string crc32;   ///< CRC-32 of the checkpoint file, 8 hex digits
};

/// The checkpoint `path` names: a file as is; a run directory as resolve_checkpoint does, or to
/// last.pt when `keep` is optimizer (averaged.pt and best.pt hold no optimizer state).
std::filesystem::path parent_checkpoint(const std::filesystem::path& path, InitKeep keep);

/// Loads the parent onto `device`.
Parent load_parent(const std::filesystem::path& path, InitKeep keep, const at::Device& device);

/// Makes `config` a fine-tuning of `parent`: takes over the parent's tokenizer settings
/// (data.vocab_size, vocab_type, joint_vocab, character_coverage, normalization) and vocabulary
/// sizes, then checks that the model sections agree (only the dropout rates may differ): an
/// nmt::Error names the first key that differs. data.spm_model is an error (the tokenizer is the
/// parent's).
void adopt_parent_config(const Parent& parent, Config& config);

/// Writes the parent's tokenizer into `run_dir` as Tokenizer::model_files(config.data,
/// run_dir) names it: the parent run directory's model files byte for byte when they hold the
/// checkpoint's models, else the models the checkpoint embeds.
void adopt_parent_tokenizer(const Parent& parent, const DataConfig& data,
                            const std::filesystem::path& run_dir);

/// One line for the run's log, e.g. "fine-tuning from run/best.pt (step 120, 1234 bytes, crc32
/// 0a1b2c3d); fresh optimizer".
std::string describe_parent(const Parent& parent, InitKeep keep);

/// Writes `<run_dir>/parent.json`: the parent's path, step, size, CRC-32 and train.init_keep.
void record_parent(const Parent& parent, InitKeep keep, const std::filesystem::path& run_dir);

}  // namespace nmt
