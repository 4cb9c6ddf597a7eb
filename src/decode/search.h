#pragma once

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>

#include <cstdint>
#include <vector>

#include "core/config.h"
#include "model/seq2seq.h"

namespace nmt {

/// A check asked between batches of long work (e.g. nmt::interrupted); true: stop there.
using StopCheck = bool (*)();

// Search over the target vocabulary. Every function runs under NoGradGuard and switches the model
// to eval() for its duration (restoring the previous mode), so it can be called from training.
// Output lengths: a hypothesis holds at most max_output_length() tokens (eos excluded); one that
// reaches the limit ends there without eos. Pad and bos are never produced (their log-probs are
// set to -inf after the softmax, as fairseq does; other tokens keep the model's log-probs).

/// One finished hypothesis.
struct Hypothesis {
  std::vector<int64_t> tokens;  ///< target ids, without bos and eos
  double log_prob = 0.0;        ///< sum of token log-probabilities (eos included when emitted)
  double score = 0.0;           ///< log_prob / GNMT length penalty (beam); log_prob (greedy)
};

/// GNMT length penalty ((5 + length) / 6)^alpha (Wu et al. 2016, §7). `length` counts the
/// hypothesis' tokens including eos when it has one.
double gnmt_length_penalty(int64_t length, double alpha);

/// Output length limit for a source of `src_len` tokens (eos excluded):
/// src_len + decode.max_len_offset, capped by the model's position table (max_len - 1, so that
/// every decoder input position exists), and at least 1.
int64_t max_output_length(const Seq2Seq& model, int64_t src_len, const DecodeConfig& config);

/// Greedy decoding with the incremental decoder (cached self-attention keys/values and cached
/// encoder projections); finished rows are dropped from the batch and the cache.
/// src [batch, src_len] (padded, eos-terminated) -> one hypothesis per row.
std::vector<Hypothesis> greedy_search(Seq2Seq& model, const at::Tensor& src,
                                      const DecodeConfig& config);

/// The tutorial loop: recomputes the whole decoder over the full prefix at every step, one
/// sentence (row, padding stripped) at a time. The reference the cached search must match token
/// for token.
std::vector<Hypothesis> greedy_search_naive(Seq2Seq& model, const at::Tensor& src,
                                            const DecodeConfig& config);

/// Beam search with the GNMT length penalty, batched over sentences × beam; the decoder cache is
/// reordered (and finished sentences dropped) with DecoderCache::select. An eos among the top
/// `beam` candidates finishes that hypothesis (score = log_prob / lp). A sentence is done when
/// `beam` hypotheses have finished, or when its nbest-th best finished score cannot be beaten by
/// any live hypothesis: at any length up to the limit (log-probs only fall; the penalty is
/// bounded by the limit's), or with config.early_stopping at its current length (the penalty
/// of its next length), which stops sooner but may miss a longer hypothesis the penalty favours.
/// Returns, per row, the config.nbest best hypotheses, best first. beam = 1 equals greedy.
std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const at::Tensor& src,
                                                 const DecodeConfig& config);

/// Sampling: config.sample translations per row of src, each drawn token by token from the
/// model's distribution after removing the tokens with probability below config.epsilon (the most
/// probable token always stays; the rest is renormalised). Rows are repeated config.sample times
/// and decoded as one batch with the incremental decoder, like greedy_search. `generator` is a
/// CPU generator (the uniform draws are made on the CPU, so results do not depend on the device's
/// random number generator). Returns, per row, the config.sample hypotheses in draw order, with
/// log_prob the model's (untruncated) log-probability and score = log_prob.
std::vector<std::vector<Hypothesis>> sample_search(Seq2Seq& model, const at::Tensor& src,
                                                   const DecodeConfig& config,
                                                   at::Generator& generator);

/// Batches of indices into `lengths` for decoding: sorted by length (stable), each batch within
/// `batch_tokens` (decode.batch_tokens): sources × `rows_per_source` (the beam or the samples,
/// DecodeConfig::candidates) × (longest + 1 for eos); a source too long for the budget on its
/// own forms a batch by itself.
std::vector<std::vector<size_t>> decode_batches(const std::vector<int64_t>& lengths,
                                                int64_t batch_tokens, int64_t rows_per_source = 1);

/// Decodes already encoded sources (ids without eos) in token-budget batches sorted by length;
/// results come back in input order (config.nbest per input). Uses greedy_search when beam == 1,
/// sample_search when config.sample > 0 (config.sample per input, in draw order; a generator
/// seeded with config.seed). Batches: decode_batches with config.candidates() rows per source.
/// A source longer than the model's position table (max_len - 1 tokens) is an nmt::Error: callers
/// truncate (Translator does, with a warning).
/// `stop` (optional) is asked before each batch; once it says true decoding ends there and the
/// sources not yet decoded keep an empty hypothesis list (a decoded source always has one).
/// `workers` > 1 decodes that many batches at once, each on its own thread with an equal share
/// of the caller's intra-op threads (at least one) and the caller's autocast; the batches and so
/// the outputs are the same as with one. Sampling always uses one (its generator is shared).
std::vector<std::vector<Hypothesis>> decode_all(Seq2Seq& model,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                const DecodeConfig& config,
                                                const at::Device& device, StopCheck stop = nullptr,
                                                int64_t workers = 1);

}  // namespace nmt
