#pragma once

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config.h"
#include "decode/ensemble.h"
#include "model/seq2seq.h"

namespace nmt {

class Searcher;

/// A check asked between batches of long work (e.g. nmt::interrupted); true: stop there.
using StopCheck = bool (*)();

// Search over the target vocabulary. Every function runs under NoGradGuard and switches the models
// to eval() for its duration (restoring the previous mode), so it can be called from training.
// Each takes one model or an Ensemble, whose members' log-probabilities it averages per step.
// Output lengths: a hypothesis holds at most max_output_length() tokens (eos excluded); one that
// reaches the limit ends there without eos. Pad and bos are never produced (their log-probs are
// set to -inf after the softmax, as fairseq does; other tokens keep the model's log-probs).

/// One finished hypothesis.
struct Hypothesis {
  std::vector<int64_t> tokens;    ///< target ids, without bos and eos
  double log_prob = 0.0;          ///< sum of token log-probabilities (eos included when emitted)
  double score = 0.0;             ///< log_prob / GNMT length penalty (beam); log_prob (greedy)
  int64_t unmet_constraints = 0;  ///< constraints it lacks (constrained search found no output
                                  ///< with them all within the length limit)
};

/// What one output must hold: the target ids it starts with (a prefix, for interactive
/// translation: decoding continues from it) and phrases it must contain (terminology
/// constraints, target ids each). Ids never include pad, bos or eos.
struct OutputGuide {
  std::vector<int64_t> prefix;
  std::vector<std::vector<int64_t>> constraints;
  /// Set when the guide's text could not be made into one (Translator::translate fails the
  /// line with it: the other lines go on).
  std::string error;
  bool empty() const { return prefix.empty() && constraints.empty(); }
  /// The tokens of all constraints together.
  int64_t constraint_tokens() const;
};

/// GNMT length penalty ((5 + length) / 6)^alpha (Wu et al. 2016, §7). `length` counts the
/// hypothesis' tokens including eos when it has one.
double gnmt_length_penalty(int64_t length, double alpha);

/// Output length limit for a source of `src_len` tokens (eos excluded):
/// src_len + decode.max_len_offset, capped by the model's position table (max_len - 1, so that
/// every decoder input position exists), and at least 1.
int64_t max_output_length(const Ensemble& models, int64_t src_len, const DecodeConfig& config);

/// Greedy decoding with the incremental decoder (cached self-attention keys/values and cached
/// encoder projections); finished rows are dropped from the batch and the cache.
/// src [batch, src_len] (padded, eos-terminated) -> one hypothesis per row. `guides` (one per
/// row, or empty) force prefixes; constraints need beam_search.
std::vector<Hypothesis> greedy_search(const Ensemble& models, const at::Tensor& src,
                                      const DecodeConfig& config,
                                      const std::vector<OutputGuide>& guides = {});

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
/// `guides` (one per row, or empty) force prefixes, and their constraints switch the search to
/// lexically constrained beam search with dynamic beam allocation (search_internal.h).
std::vector<std::vector<Hypothesis>> beam_search(const Ensemble& models, const at::Tensor& src,
                                                 const DecodeConfig& config,
                                                 const std::vector<OutputGuide>& guides = {});

/// Removes unlikely tokens before a draw: probs [rows, vocab] -> the same with the removed
/// tokens at 0 (the most probable token of each row stays). SamplingSearcher::truncate.
using Truncation = std::function<at::Tensor(const at::Tensor& probs)>;

/// Epsilon truncation (Hewitt et al. 2022): tokens with probability below `epsilon` go, except
/// the most probable one; 0 keeps every token.
at::Tensor epsilon_truncation(const at::Tensor& probs, double epsilon);

/// Sampling: config.sample translations per row of src, each drawn token by token from the
/// model's distribution after `truncate` (empty: epsilon_truncation with config.epsilon) has
/// removed the unlikely tokens (the rest is renormalised). Rows are repeated config.sample times
/// and decoded as one batch with the incremental decoder, like greedy_search. `generator` is a
/// CPU generator (the uniform draws are made on the CPU, so results do not depend on the device's
/// random number generator). Returns, per row, the config.sample hypotheses in draw order, with
/// log_prob the model's (untruncated) log-probability and score = log_prob. `guides` (one per
/// row, or empty) force prefixes; constraints cannot be sampled.
std::vector<std::vector<Hypothesis>> sample_search(const Ensemble& models, const at::Tensor& src,
                                                   const DecodeConfig& config,
                                                   at::Generator& generator,
                                                   const std::vector<OutputGuide>& guides = {},
                                                   const Truncation& truncate = {});

/// Batches of indices into `lengths` for decoding: longest first (stable), each batch within
/// `batch_tokens` (decode.batch_tokens): sources × `rows_per_source` (the beam or the samples,
/// DecodeConfig::candidates) × (longest + 1 for eos); a source too long for the budget on its
/// own forms a batch by itself. With `taper` the last batches get smaller (each at most a quarter
/// of the work left, down to an eighth of the budget), so that several workers finish together.
std::vector<std::vector<size_t>> decode_batches(const std::vector<int64_t>& lengths,
                                                int64_t batch_tokens, int64_t rows_per_source = 1,
                                                bool taper = false);

/// Decodes already encoded sources (ids without eos) in token-budget batches sorted by length;
/// results come back in input order: each input's candidates from the strategy decode.search
/// names (make_searcher; the n-best list of a beam, the draws in draw order with a generator
/// seeded with config.seed). Batches: decode_batches with config.candidates() rows per source.
/// A source longer than the model's position table (max_len - 1 tokens) is an nmt::Error: callers
/// truncate (Translator does, with a warning).
/// `stop` (optional) is asked before each batch; once it says true decoding ends there and the
/// sources not yet decoded keep an empty hypothesis list (a decoded source always has one).
/// `workers` > 1 decodes that many batches at once, each on its own thread with an equal share
/// of the caller's intra-op threads (at least one) and the caller's autocast, on tapered batches
/// (decode_batches): the batches and so the outputs are the same for any number of workers above
/// one, and can differ from one worker's whole batches by float rounding. Sampling always uses
/// one (its generator is shared).
/// `guides`: one per source (or empty), each checked by check_guide (an nmt::Error naming the
/// source); a source with constraints is beam searched (constrained) whatever decode.beam is.
std::vector<std::vector<Hypothesis>> decode_all(const Ensemble& models,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                const DecodeConfig& config,
                                                const at::Device& device, StopCheck stop = nullptr,
                                                int64_t workers = 1,
                                                const std::vector<OutputGuide>& guides = {});

/// The same with the strategy `searcher` (decode/searcher.h): its config's options, its
/// rows_per_source for batching; a strategy that is not concurrent() decodes one batch at a time.
std::vector<std::vector<Hypothesis>> decode_all(const Ensemble& models,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                Searcher& searcher, const at::Device& device,
                                                StopCheck stop = nullptr, int64_t workers = 1,
                                                const std::vector<OutputGuide>& guides = {});

/// Checks a guide against the output limit of its source (max_output_length): an nmt::Error
/// naming `what` (e.g. "line 3") when the prefix is longer than the limit, a constraint is empty,
/// the constraints together have more tokens than the output may, or constraints are asked of
/// sampling.
void check_guide(const OutputGuide& guide, int64_t output_limit, const DecodeConfig& config,
                 const std::string& what);

}  // namespace nmt
