#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "core/config.h"
#include "model/seq2seq.h"

namespace nmt {

/// One finished hypothesis.
struct Hypothesis {
  std::vector<int64_t> tokens;  ///< target ids, without bos and eos
  double log_prob = 0.0;        ///< sum of token log-probabilities (eos included)
  double score = 0.0;           ///< log_prob / GNMT length penalty (beam); log_prob (greedy)
};

/// Output length limit for a source of `src_len` tokens: src_len + decode.max_len_offset,
/// capped by the model's position table.
int64_t max_output_length(const Seq2Seq& model, int64_t src_len, const DecodeConfig& config);

/// Greedy decoding with the incremental decoder (cached self-attention keys/values and cached
/// encoder projections). src [batch, src_len] (padded, eos-terminated) -> one hypothesis per row.
/// Runs under NoGradGuard; the model should be in eval() mode.
std::vector<Hypothesis> greedy_search(Seq2Seq& model, const at::Tensor& src,
                                      const DecodeConfig& config);

/// The tutorial loop: recomputes the whole decoder over the full prefix at every step, one
/// sentence (row) at a time. The reference the cached search must match token for token.
std::vector<Hypothesis> greedy_search_naive(Seq2Seq& model, const at::Tensor& src,
                                            const DecodeConfig& config);

/// Beam search with the GNMT length penalty ((5 + |y|) / 6)^alpha (Wu et al. 2016, §7).
/// Returns, per row, the config.nbest best hypotheses, best first. beam = 1 equals greedy.
std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const at::Tensor& src,
                                                 const DecodeConfig& config);

/// Decodes already encoded sources (ids without eos) in token-budget batches sorted by length;
/// results come back in input order (nbest per input). Uses greedy_search when beam == 1.
std::vector<std::vector<Hypothesis>> decode_all(Seq2Seq& model,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                const DecodeConfig& config,
                                                const at::Device& device);

}  // namespace nmt
