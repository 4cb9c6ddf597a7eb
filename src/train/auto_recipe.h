#pragma once

// Auto sizing: the keys a config gives as "auto" (core/config.h, auto_sized_keys) are chosen from
// the training corpus's statistics and the budget times the host's measured speed, by a few
// rules anchored at the recipe tuned on Multi30k for an hour (configs/multi30k_en_de.json) and
// scaled away from it. docs/own_data.md gives each rule with the measurements behind it.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

/// What the rules read of the training corpora (every data.train entry, as read, unfiltered).
struct CorpusProfile {
  int64_t pairs = 0;
  int64_t src_bytes = 0, tgt_bytes = 0;  ///< UTF-8 bytes of each side (newlines excluded)
  int64_t src_chars = 0, tgt_chars = 0;  ///< characters (code points) of each side
  int64_t src_alphabet = 0;              ///< distinct characters of the sources
  int64_t tgt_alphabet = 0;              ///< distinct characters of the targets
  int64_t joint_alphabet = 0;            ///< distinct characters of both sides
  /// Target characters NFKC rewrites as ASCII: the full-width forms U+FF01-U+FF5E ("，", "？")
  int64_t tgt_fullwidth = 0;
};

/// Reads every data.train corpus once. Errors name the file as the corpus readers do.
CorpusProfile profile_corpus(const DataConfig& data);

/// The host's training speed the rules assume: the model's matmul FLOP/s.
struct HostSpeed {
  double model_flops = 0.0;  ///< FLOP/s of model matmuls a training run sustains
  std::string how;           ///< how it was measured, for the log
};

/// Measures the device's matmul ceiling (the best of three on a CPU, about a second) and scales it
/// by what training runs reached of it (docs/own_data.md).
HostSpeed measure_host_speed(const TrainConfig& train);

/// The anchor: Multi30k en-de's training corpus and the hour the recipe was tuned in.
struct AutoAnchor {
  static constexpr double kChars = 3819194.0;  ///< characters of train.en + train.de
  static constexpr double kEpochs = 28.0;      ///< epochs of the tuned hour (7,415 steps)
  /// Target pieces of the tuned hour: 28 epochs of train.de's estimated 599,378 (2,110,398
  /// bytes / kBytesPerPiece + an eos per pair)
  static constexpr double kTunedHourPieces = 16.78e6;
  static constexpr int64_t kVocab = 4000;        ///< its joint vocabulary
  static constexpr int64_t kBatchTokens = 2048;  ///< its batches
  static constexpr double kLr = 1.5e-3;          ///< its peak learning rate at d_model 256
  static constexpr double kBytesPerPiece = 3.7;  ///< UTF-8 bytes per piece at ~4,000 pieces
  /// Target pieces per batch token budget: batches count each row's longer side, padded, so a
  /// batch of B tokens carried 0.89-0.93 B target pieces on Multi30k, min-id and aym-es and 0.71 B
  /// on ja-en (longer Japanese sources); 0.85 is the median fit of 15 budget cells' steps
  static constexpr double kTargetShare = 0.85;
  /// Model FLOP/s a CPU run sustains / its fp32 matmul ceiling at n = 1,024, training in bf16 on
  /// bf16 instructions: 0.85 x the median of 15 budget cells' epochs run over the epochs
  /// expected at 0.85 (1.39); 13 ran on AVX512-BF16 EPYCs, 2 on an AMX Xeon (0.74-0.92x the
  /// epochs this expects there)
  static constexpr double kBf16Efficiency = 1.2;
  /// The same training in fp32 (an AVX2-only host): its hour sustained 113.3 GFLOP/s against a
  /// ceiling of 182 at n = 1,024. Also of the bf16 ceiling, for bf16 on fallback kernels.
  static constexpr double kFp32Efficiency = 0.62;
};

/// Sizes every key in config.auto_keys from `corpus` and `host` (pure: no I/O), empties
/// auto_keys and appends each choice with its reason to config.auto_choices, in the order
/// vocabulary, shape, regularisation, batches, schedule. Throws nmt::Error for a budget it
/// cannot size (no step, time or epoch limit).
void size_recipe(Config& config, const CorpusProfile& corpus, const HostSpeed& host);

/// size_recipe on the corpus and this host, when config.auto_keys is not empty.
void resolve_auto(Config& config);

}  // namespace nmt
