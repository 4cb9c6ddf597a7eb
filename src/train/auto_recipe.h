#pragma once

// Auto sizing: the keys a config gives as "auto" (core/config.h, auto_sized_keys) are chosen from
// the training corpus's statistics and the budget times the host's measured speed, by a few
// rules anchored at the recipe tuned on Multi30k for an hour (configs/multi30k_en_de.json) and
// scaled away from it. docs/own_data.md gives each rule with the measurements behind it.

#include <cstdint>
#include <string>
#include <utility>
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
  /// UTF-8 bytes of the source and target of up to kSampled pairs drawn evenly from the corpus
  /// (a reservoir, seeded): the lengths measure_host_speed batches
  std::vector<std::pair<int32_t, int32_t>> sampled_bytes;
  static constexpr size_t kSampled = 4096;
  /// What each validation decodes: the validation sets and the monitor splits (every data.valid
  /// and train.monitor_splits entry, in every trained pair)
  int64_t valid_pairs = 0;
  int64_t valid_tgt_bytes = 0;
};

/// Reads every data.train corpus once, and the sizes of the validation sets and of `monitors`
/// (train.monitor_splits). Errors name the file as the corpus readers do.
CorpusProfile profile_corpus(const DataConfig& data, const std::vector<CorpusSpec>& monitors = {});

/// The host's training speed the rules assume, measured on batches shaped like the corpus's.
struct HostSpeed {
  /// Model FLOP/s training sustains, counted on the corpus's mean pair (training_flops, without
  /// padding): the target pieces/s measured times the FLOPs of one, so that another shape or
  /// vocabulary trains at this / its own FLOPs per piece
  double model_flops = 0.0;
  std::string how;  ///< how it was measured, for the log
  /// Target pieces a batch of B tokens carries, / B: batches count each row's longer side,
  /// padded (0.89-0.93 on Multi30k, min-id and aym-es, 0.71 on ja-en, whose sources are longer)
  double target_share = 0.85;
  /// A warning for the user when other processes took AutoAnchor::kBusyHost or more of the
  /// processor time the timed steps could have had (CPU only); empty otherwise
  std::string warning{};
};

/// Times training steps of the tuned shape (the anchor below, in the run's precision, on its
/// device) on batches of 2,048 tokens cut from `corpus`'s sampled pairs as training cuts them,
/// each side estimated at bytes / AutoAnchor::kBytesPerPiece pieces of random ids: `timed_batches`
/// of them, a few seconds. Throws nmt::Error for a corpus without pairs.
HostSpeed measure_host_speed(const Config& config, const CorpusProfile& corpus,
                             size_t timed_batches = 8);

/// Model FLOPs of training on one target piece of `corpus`'s mean pair, `shape` with a target
/// vocabulary of `vocab` pieces (the FLOP model that scales a measured speed to another shape).
double flops_per_target_piece(const ModelConfig& shape, int64_t vocab, const CorpusProfile& corpus);

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
  /// Seconds a validation takes, in seconds of training on as many target pieces: greedy BLEU
  /// decoding and the loss (1.04-1.18 in the ten auto cells on CPUs, median 1.08:
  /// docs/results/auto_estimate.md); the loss alone a forward pass, a third of a step (not
  /// measured). On a GPU decoding is slower against training (not measured either).
  static constexpr double kValidationCost = 1.1;
  static constexpr double kLossOnlyValidationCost = 0.35;
  /// The share of the probe's processor time other processes may take before measure_host_speed
  /// warns: a speed 10% low sizes dropout 0.008 to 0.015 lower, within a rounding step
  static constexpr double kBusyHost = 0.1;
};

/// Sizes every key in config.auto_keys from `corpus` and `host` (pure: no I/O), empties
/// auto_keys and appends each choice with its reason to config.auto_choices, in the order
/// vocabulary, shape, regularisation, batches, schedule. Throws nmt::Error for a budget it
/// cannot size (no step, time or epoch limit).
void size_recipe(Config& config, const CorpusProfile& corpus, const HostSpeed& host);

/// size_recipe on the corpus and this host, when config.auto_keys is not empty; a warning about
/// the measure (HostSpeed::warning) goes to config.auto_warnings.
void resolve_auto(Config& config);

}  // namespace nmt
