#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/config.h"
#include "data/pair_store.h"

namespace nmt {

/// A padded batch, batch-first. src = x + eos, tgt_in = bos + y, tgt_out = y + eos (pad = 0).
struct Batch {
  at::Tensor src;               ///< [batch, src_len] int64
  at::Tensor tgt_in;            ///< [batch, tgt_len] int64
  at::Tensor tgt_out;           ///< [batch, tgt_len] int64
  int64_t src_tokens = 0;       ///< non-pad source tokens (eos included)
  int64_t tgt_tokens = 0;       ///< non-pad target tokens in tgt_out (eos included)
  std::vector<size_t> indices;  ///< positions of these pairs in the example list
  int64_t size() const { return src.defined() ? src.size(0) : 0; }
  /// Copy to `device` (pinned memory + non_blocking copies for CUDA).
  Batch to(const at::Device& device) const;
};

/// Options of token-budget batching.
struct BatchingOptions {
  int64_t batch_tokens = 4096;  ///< budget per batch per side, padding included:
                                ///< rows * (longest src + 1) and rows * (longest tgt + 1)
  int64_t pool_batches = 100;   ///< length-sort pools hold about this many batches
  int64_t seed = 1;             ///< with the epoch, determines the order
};

/// The batching options a DataConfig describes (data.batch_tokens, pool_batches, seed).
BatchingOptions batching_options(const DataConfig& data);

/// A generator for one epoch's random choices: mt19937_64 seeded through seed_seq with both
/// 32-bit halves of `seed` and `epoch` (and `stream`, when not 0, so that other uses of the same
/// (seed, epoch) draw unrelated numbers). seed_seq's mixing is specified by the standard, so the
/// numbers are the same on every platform, and neighbouring epochs get unrelated streams.
std::mt19937_64 epoch_generator(int64_t seed, int64_t epoch, uint32_t stream = 0);

/// Cuts `pairs` into batches of indices for one epoch: shuffle with (seed, epoch), sort within
/// pools of about pool_batches batches by (longer side, source length, target length), cut
/// batches under the token budget, shuffle the batch order. Deterministic in (seed, epoch) on
/// every platform (mt19937_64 seeded through seed_seq, own Fisher-Yates); every example appears
/// exactly once. An example too long for the budget on its own forms a batch by itself.
/// Reads only the pairs' lengths.
std::vector<std::vector<size_t>> make_batches(const PairsView& pairs,
                                              const BatchingOptions& options, int64_t epoch);

/// Batches for evaluation: sorted by length (same key), no shuffling, same budget rule.
std::vector<std::vector<size_t>> make_sorted_batches(const PairsView& pairs, int64_t batch_tokens);

/// Pads the selected pairs (indices into `pairs`) into a Batch (on the CPU).
Batch collate(const PairsView& pairs, const std::vector<size_t>& indices);

/// Fraction of padding among all token slots (both sides) in the given batches.
double padding_ratio(const PairsView& pairs, const std::vector<std::vector<size_t>>& batches);

// The same over examples held one by one (tests): each call packs them into a PairStore first,
// so both give the same batches and tensors; callers that batch repeatedly pack once instead.
std::vector<std::vector<size_t>> make_batches(const std::vector<Example>& examples,
                                              const BatchingOptions& options, int64_t epoch);
std::vector<std::vector<size_t>> make_sorted_batches(const std::vector<Example>& examples,
                                                     int64_t batch_tokens);
Batch collate(const std::vector<Example>& examples, const std::vector<size_t>& indices);
double padding_ratio(const std::vector<Example>& examples,
                     const std::vector<std::vector<size_t>>& batches);

}  // namespace nmt
