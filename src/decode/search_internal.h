#pragma once

// Helpers shared by the search implementations (search.cpp, beam_search.cpp); not a public API.

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/config.h"
#include "decode/search.h"
#include "model/decoder.h"
#include "model/seq2seq.h"

namespace nmt::detail {

/// Puts a module in eval() mode for a scope and restores its previous mode afterwards. A
/// module already in eval() mode is not written to: threads decoding with one shared model
/// (nmt serve --workers) only read it.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::nn::Module& module)
      : module_(module), was_training_(module.is_training()) {
    if (was_training_) module_.eval();
  }
  ~EvalModeGuard() {
    if (was_training_) module_.train();
  }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

/// Per row of src [batch, src_len] (padded, eos-terminated): the output length limit.
std::vector<int64_t> output_limits(const Seq2Seq& model, const at::Tensor& src,
                                   const DecodeConfig& config);

/// log_softmax of logits [rows, vocab] in float32 with pad and bos set to -inf: they are never
/// valid outputs (as in fairseq, the other tokens keep the model's probabilities).
at::Tensor output_log_probs(const at::Tensor& logits);

/// One incremental decoder step: tokens [rows, new_len] -> output_log_probs of the next token
/// after the last new position, [rows, tgt_vocab]. Only the last position is projected.
at::Tensor next_log_probs(Seq2Seq& model, const at::Tensor& tokens, DecoderCache& cache,
                          const at::Tensor& src_mask);

/// One step of the searches that drop finished rows (greedy, sampling). Row i of the active
/// batch extends hypotheses[rows[i]] by ids[i] (ids [active, 1]) and adds log_probs[i] (the
/// chosen token's log-probability, [active, 1]); the row ends at eos or when the hypothesis
/// reaches limits[rows[i]] tokens. Ended rows leave `rows`, the cache, `src_mask` and `ids`,
/// which is then the next step's input.
void advance_rows(std::vector<Hypothesis>& hypotheses, std::vector<int64_t>& rows,
                  const std::vector<int64_t>& limits, at::Tensor& ids, const at::Tensor& log_probs,
                  DecoderCache& cache, at::Tensor& src_mask);

/// The live hypotheses of a beam search, `beam` rows per sentence still searched (the CPU side
/// of the decoder cache). Row r extends row origin[r] of the previous step by next_token[r].
struct LiveBeams {
  std::vector<std::vector<int64_t>> tokens;  ///< tokens so far, without bos
  std::vector<double> log_probs;             ///< -inf for unused rows
  std::vector<int64_t> origin;               ///< row of the previous step it extends
  std::vector<int64_t> next_token;           ///< token fed at the next step
};

/// The next-token log-probabilities of every row of `live`, [rows, vocab] (pad and bos -inf, as
/// output_log_probs gives them). The first call has `beam` empty rows per sentence and no
/// origin; each later one follows one step of the search.
using NextLogProbs = std::function<at::Tensor(const LiveBeams& live)>;

/// beam_search (search.h) over a step function instead of a model, with `limits` the output
/// length limit of each sentence. A step function that scripts the log-probs directly lets tests
/// build the cases that decide when the search may stop.
std::vector<std::vector<Hypothesis>> beam_search_steps(const std::vector<int64_t>& limits,
                                                       const DecodeConfig& config,
                                                       const NextLogProbs& next);

/// A CPU int64 vector as an index tensor on `device`.
at::Tensor index_tensor(const std::vector<int64_t>& index, const at::Device& device);

}  // namespace nmt::detail
