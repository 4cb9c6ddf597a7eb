#include <torch/types.h>
#include <torch/utils.h>

#include <numeric>

#include "core/special_ids.h"
#include "decode/search.h"
#include "decode/search_internal.h"

namespace nmt {

at::Tensor epsilon_truncation(const at::Tensor& probs, double epsilon) {
  if (epsilon <= 0.0) return probs;
  // The most probable token stays even when it is below epsilon.
  const auto top = std::get<0>(probs.max(-1, /*keepdim=*/true));  // [rows, 1]
  return probs.masked_fill(probs < top.clamp_max(epsilon), 0.0);
}

std::vector<std::vector<Hypothesis>> sample_search(const Ensemble& models, const at::Tensor& src,
                                                   const DecodeConfig& config,
                                                   at::Generator& generator,
                                                   const std::vector<OutputGuide>& guides,
                                                   const Truncation& truncate) {
  TORCH_CHECK(config.sample >= 1, "sample_search: decode.sample must be >= 1, got ", config.sample);
  if (src.size(0) == 0) return {};
  TORCH_CHECK(guides.empty() || static_cast<int64_t>(guides.size()) == src.size(0),
              "sample_search: ", guides.size(), " guides for ", src.size(0), " rows");
  torch::NoGradGuard no_grad;
  const int64_t draws = config.sample;
  std::vector<int64_t> limits;  // per hypothesis: its source row's output limit
  for (const int64_t limit : detail::output_limits(models, src, config)) {
    limits.insert(limits.end(), draws, limit);
  }
  // Each source is encoded once; its encoder output and mask are repeated for its draws
  // (source row r owns rows r * draws .. r * draws + draws - 1).
  EnsembleState state(models, src, detail::guide_ids(guides));
  state.select(at::arange(src.size(0), src.options().dtype(at::kLong)).repeat_interleave(draws));
  const int64_t total_rows = src.size(0) * draws;
  std::vector<Hypothesis> hypotheses(total_rows);
  std::vector<int64_t> rows(total_rows);  // hypothesis of each active row
  std::iota(rows.begin(), rows.end(), 0);
  auto tokens = at::full({total_rows, 1}, kBosId, src.options().dtype(at::kLong));
  for (int64_t step = 0; !rows.empty(); ++step) {
    auto log_probs = state.next_log_probs(tokens);  // [active, V]
    std::vector<const OutputGuide*> guided;
    if (!guides.empty()) {
      std::vector<int64_t> sources;  // the source row of each active row
      for (const int64_t row : rows) sources.push_back(row / draws);
      guided = detail::row_guides(guides, sources);
    }
    if (guards_repetition(config)) {
      detail::guard_unforced(log_probs, detail::histories(hypotheses, rows), guided, step, config);
    }
    if (!guides.empty()) detail::force_prefixes(log_probs, step, guided);
    // An ensemble's averaged log-probs are not a distribution, and a forced prefix row can be
    // one token below float32's exp range: both are renormalised. One model's are its own.
    auto probs =
        models.size() > 1 || !guides.empty() ? at::softmax(log_probs, -1) : log_probs.exp();
    probs = truncate ? truncate(probs) : epsilon_truncation(probs, config.epsilon);
    // Inverse-CDF draw: the first token whose cumulative probability exceeds u * total.
    // (Float cumsums of non-negative values never decrease; a token with probability 0 adds
    // nothing to the sum, so no u can land on it.)
    const auto cdf = probs.cumsum(-1);                       // [active, V]
    const auto total = cdf.narrow(-1, cdf.size(-1) - 1, 1);  // [active, 1]
    const auto u = at::rand({static_cast<int64_t>(rows.size()), 1}, generator,
                            at::TensorOptions().dtype(at::kFloat))
                       .to(cdf.device());
    auto ids = at::searchsorted(cdf, u * total, /*out_int32=*/false, /*right=*/true);
    // u * total can round up to total itself (no token exceeds it): take the most probable one.
    ids = at::where(ids < cdf.size(-1), ids, std::get<1>(probs.max(-1, /*keepdim=*/true)));
    const auto chosen = log_probs.gather(1, ids);  // the model's (guarded) log-probabilities
    detail::advance_rows(hypotheses, rows, limits, ids, chosen, state);
    tokens = ids;  // [active, 1]
  }
  std::vector<std::vector<Hypothesis>> results(src.size(0));
  for (int64_t row = 0; row < total_rows; ++row) {
    auto& hypothesis = hypotheses[row];
    hypothesis.score = hypothesis.log_prob;
    results[row / draws].push_back(std::move(hypothesis));
  }
  return results;
}

}  // namespace nmt
