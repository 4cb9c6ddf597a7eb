#pragma once

// Helpers shared by the search implementations (search.cpp, beam_search.cpp); not a public API.

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/config.h"
#include "decode/ensemble.h"
#include "decode/repetition.h"
#include "decode/search.h"
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

/// EvalModeGuard for every member of an ensemble, for a scope.
class EnsembleEvalModes {
 public:
  explicit EnsembleEvalModes(const Ensemble& models) {
    for (size_t m = 0; m < models.size(); ++m) {
      auto member = models.member(m);  // the module outlives the handle: the ensemble owns it
      guards_.push_back(std::make_unique<EvalModeGuard>(*member));
    }
  }

 private:
  std::vector<std::unique_ptr<EvalModeGuard>> guards_;
};

/// Per row of src [batch, src_len] (padded, eos-terminated): the output length limit.
std::vector<int64_t> output_limits(const Ensemble& models, const at::Tensor& src,
                                   const DecodeConfig& config);

/// One step of the searches that drop finished rows (greedy, sampling). Row i of the active
/// batch extends hypotheses[rows[i]] by ids[i] (ids [active, 1]) and adds log_probs[i] (the
/// chosen token's log-probability, [active, 1]); the row ends at eos or when the hypothesis
/// reaches limits[rows[i]] tokens. Ended rows leave `rows`, the state's caches and mask, and
/// `ids`, which is then the next step's input.
void advance_rows(std::vector<Hypothesis>& hypotheses, std::vector<int64_t>& rows,
                  const std::vector<int64_t>& limits, at::Tensor& ids, const at::Tensor& log_probs,
                  EnsembleState& state);

/// Forces target prefixes: row i of log_probs [rows, vocab] keeps only the token
/// guides[i]->prefix[step] (its log-probability unchanged, every other token -inf) while its
/// prefix is longer than `step`, the 0-based output position; a null guide forces nothing.
void force_prefixes(at::Tensor& log_probs, int64_t step,
                    const std::vector<const OutputGuide*>& guides);

/// The tokens so far of the hypothesis of each of `rows` (indices into `hypotheses`), for
/// guard_repetition.
std::vector<const std::vector<int64_t>*> histories(const std::vector<Hypothesis>& hypotheses,
                                                   const std::vector<int64_t>& rows);

/// guard_repetition (decode/repetition.h) of `log_probs` [rows, vocab] whose rows have the
/// tokens `histories` so far, at 0-based output position `step`, except the rows whose guide
/// (`guides`, one per row, or empty) still forces a prefix token there: the prefix is the
/// user's, and it may repeat itself.
void guard_unforced(at::Tensor& log_probs, std::vector<const std::vector<int64_t>*> histories,
                    const std::vector<const OutputGuide*>& guides, int64_t step,
                    const DecodeConfig& config);

/// The guide of each of `rows` (input rows) from `guides` (per input row; empty: none), for
/// force_prefixes; `repeat` consecutive entries per row.
std::vector<const OutputGuide*> row_guides(const std::vector<OutputGuide>& guides,
                                           const std::vector<int64_t>& rows, int64_t repeat = 1);

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
/// length limit of each sentence and `guides` its prefix and constraints (per sentence; empty:
/// none). A step function that scripts the log-probs directly lets tests build the cases that
/// decide when the search may stop. With constraints it is constrained_beam_search_steps.
std::vector<std::vector<Hypothesis>> beam_search_steps(const std::vector<int64_t>& limits,
                                                       const DecodeConfig& config,
                                                       const NextLogProbs& next,
                                                       const std::vector<OutputGuide>& guides = {});

/// Lexically constrained beam search with dynamic beam allocation (Post & Vilar 2018): every
/// output holds each of its guide's constraint phrases. Each step's candidates are the `beam`
/// best extensions of the sentence, each live hypothesis' best next token, and each token that
/// continues its constraint in progress or starts one it has not met; they are grouped in banks
/// by the number of constraint tokens met and the beam is shared out over the banks, the most
/// constrained first, round by round. Eos (and the length limit) finish only a hypothesis that
/// meets every constraint; when none does by the limit, the best of those cut there comes back
/// with Hypothesis::unmet_constraints set. Stops as beam_search_steps does.
std::vector<std::vector<Hypothesis>> constrained_beam_search_steps(
    const std::vector<int64_t>& limits, const DecodeConfig& config, const NextLogProbs& next,
    const std::vector<OutputGuide>& guides);

/// A finished hypothesis: score = log_prob / the GNMT penalty of its length (eos included).
Hypothesis finish_hypothesis(std::vector<int64_t> tokens, double log_prob, bool has_eos,
                             double alpha);

/// The best `nbest` finished hypotheses, best first (ties: the earlier one).
std::vector<Hypothesis> best_of(std::vector<Hypothesis> finished, int64_t nbest);

/// Whether a sentence with `finished` hypotheses, whose live ones for the next step are rows
/// [first, end) of `next`, is done: `beam` have finished, none is live, or its nbest-th best
/// score is at least the best a live hypothesis could still reach within output limit `limit`
/// (its log-prob over the largest length penalty it may still get; with early stopping, over
/// its next length's).
bool sentence_done(const std::vector<Hypothesis>& finished, const LiveBeams& next, size_t first,
                   int64_t limit, const DecodeConfig& config);

/// Pads rows [first, end) of `next` to `beam` rows with unused (-inf) hypotheses.
void pad_beam(LiveBeams& next, size_t first, int64_t beam);

/// Each source's target ids of its guide's prefix and constraints (none without guides): a
/// shortlist keeps them candidates of that sentence.
std::vector<std::vector<int64_t>> guide_ids(const std::vector<OutputGuide>& guides);

/// A CPU int64 vector as an index tensor on `device`.
at::Tensor index_tensor(const std::vector<int64_t>& index, const at::Device& device);

}  // namespace nmt::detail
