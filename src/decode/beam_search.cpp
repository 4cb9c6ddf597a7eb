// Beam search (decode/search.h), batched over sentences × beam with one incremental decoder
// cache. Row r of the live batch is beam r % beam of the r / beam-th sentence still searched.
#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>

#include <torch/types.h>
#include <torch/utils.h>

#include "core/special_ids.h"
#include "decode/search.h"
#include "decode/search_internal.h"

namespace nmt {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// A sentence still being searched.
struct SentenceSearch {
  int64_t row = 0;    ///< input row
  int64_t limit = 0;  ///< output length limit (eos excluded)
  std::vector<Hypothesis> finished;
};

/// The live hypotheses, `beam` rows per sentence still searched (CPU side of the cache).
struct LiveBeams {
  std::vector<std::vector<int64_t>> tokens;  ///< tokens so far, without bos
  std::vector<double> log_probs;             ///< -inf for unused rows
  std::vector<int64_t> origin;               ///< row of the previous step it extends
  std::vector<int64_t> next_token;           ///< token fed at the next step
};

/// The best candidates of every sentence: top 2·beam over beam × vocab, on the CPU.
struct Candidates {
  at::Tensor log_probs;  ///< [sentences, 2 * beam] double
  at::Tensor flat_ids;   ///< [sentences, 2 * beam] int64, beam_index * vocab + token
};

Candidates top_candidates(const at::Tensor& log_probs, const std::vector<double>& live_log_probs,
                          int64_t beam) {
  const int64_t vocab = log_probs.size(1);
  const auto live = at::tensor(at::ArrayRef<double>(live_log_probs), at::kDouble)
                        .to(log_probs.device(), at::kFloat)
                        .unsqueeze(1);
  const auto total = (live + log_probs).view({-1, beam * vocab});  // [sentences, beam * vocab]
  // 2·beam candidates always hold at least `beam` that are not eos (one eos per beam at most).
  auto [values, ids] = total.topk(std::min(2 * beam, beam * vocab), -1);
  return {values.to(at::kCPU, at::kDouble).contiguous(), ids.to(at::kCPU).contiguous()};
}

Hypothesis finish(std::vector<int64_t> tokens, double log_prob, bool has_eos, double alpha) {
  const auto length = static_cast<int64_t>(tokens.size()) + (has_eos ? 1 : 0);
  return {std::move(tokens), log_prob, log_prob / gnmt_length_penalty(length, alpha)};
}

/// Extends sentence `s` (slot `slot` of the live batch) with its candidates: eos among the top
/// `beam` finishes a hypothesis; the best `beam` others continue (or finish at the length limit).
void expand_sentence(SentenceSearch& s, int64_t slot, const Candidates& candidates,
                     const LiveBeams& live, LiveBeams& next, const DecodeConfig& config,
                     int64_t vocab) {
  const int64_t beam = config.beam;
  const int64_t count = candidates.log_probs.size(1);
  const auto* values = candidates.log_probs.data_ptr<double>() + slot * count;
  const auto* ids = candidates.flat_ids.data_ptr<int64_t>() + slot * count;
  int64_t continued = 0;
  for (int64_t c = 0; c < count && continued < beam; ++c) {
    if (values[c] == kNegInf) break;  // sorted: the rest extend unused rows
    const int64_t origin = slot * beam + ids[c] / vocab;
    const int64_t token = ids[c] % vocab;
    if (token == kEosId) {
      if (c < beam) s.finished.push_back(finish(live.tokens[origin], values[c], true,
                                                config.length_penalty));
      continue;
    }
    auto tokens = live.tokens[origin];
    tokens.push_back(token);
    ++continued;
    if (static_cast<int64_t>(tokens.size()) >= s.limit) {
      s.finished.push_back(finish(std::move(tokens), values[c], false, config.length_penalty));
      continue;  // all live hypotheses share a length: the whole sentence ends this step
    }
    next.tokens.push_back(std::move(tokens));
    next.log_probs.push_back(values[c]);
    next.origin.push_back(origin);
    next.next_token.push_back(token);
  }
}

/// Whether sentence `s`, whose live hypotheses are rows [first, end) of `next`, is done.
bool sentence_done(SentenceSearch& s, const LiveBeams& next, size_t first,
                   const DecodeConfig& config) {
  if (first == next.tokens.size() || static_cast<int64_t>(s.finished.size()) >= config.beam) {
    return true;
  }
  if (static_cast<int64_t>(s.finished.size()) < config.nbest) return false;
  std::vector<double> scores;
  for (const auto& h : s.finished) scores.push_back(h.score);
  std::nth_element(scores.begin(), scores.begin() + (config.nbest - 1), scores.end(),
                   std::greater<double>());
  // Log-probs only fall as a hypothesis grows and are <= 0, so its best reachable score is its
  // current log-prob over the largest penalty among the lengths it can still reach.
  const auto length = static_cast<int64_t>(next.tokens[first].size());
  const double lp_max = std::max(gnmt_length_penalty(length + 1, config.length_penalty),
                                 gnmt_length_penalty(s.limit + 1, config.length_penalty));
  const double best_live =
      *std::max_element(next.log_probs.begin() + first, next.log_probs.end());
  return scores[config.nbest - 1] >= best_live / lp_max;
}

/// Pads sentence rows [first, end) of `next` to `beam` rows with unused (-inf) hypotheses.
void pad_beam(LiveBeams& next, size_t first, int64_t beam) {
  while (static_cast<int64_t>(next.tokens.size() - first) < beam) {
    next.tokens.push_back(next.tokens[first]);
    next.log_probs.push_back(kNegInf);
    next.origin.push_back(next.origin[first]);
    next.next_token.push_back(kPadId);
  }
}

/// The best config.nbest finished hypotheses, best first.
std::vector<Hypothesis> best_of(std::vector<Hypothesis> finished, int64_t nbest) {
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int64_t>(finished.size()) > nbest) finished.resize(nbest);
  return finished;
}

/// Everything beam search tracks between steps.
struct SearchState {
  std::vector<SentenceSearch> active;  ///< sentences still searched, in live-batch order
  LiveBeams live;                      ///< their hypotheses, `beam` rows each
  std::vector<std::vector<Hypothesis>> results;  ///< per input row, once done
};

SearchState initial_state(const std::vector<int64_t>& limits, int64_t beam) {
  SearchState state;
  const auto sentences = static_cast<int64_t>(limits.size());
  for (int64_t row = 0; row < sentences; ++row) state.active.push_back({row, limits[row], {}});
  state.results.resize(limits.size());
  // Only the first row of each sentence is usable at first: the others would duplicate it.
  state.live.tokens.resize(static_cast<size_t>(sentences * beam));
  state.live.log_probs.assign(state.live.tokens.size(), kNegInf);
  for (int64_t s = 0; s < sentences; ++s) state.live.log_probs[s * beam] = 0.0;
  return state;
}

/// Extends every active sentence by one token; done sentences move to `results` and leave the
/// live batch. Afterwards live.origin says which previous row each live row extends.
void advance(SearchState& state, const Candidates& candidates, const DecodeConfig& config,
             int64_t vocab) {
  LiveBeams next;
  std::vector<SentenceSearch> still_active;
  for (size_t slot = 0; slot < state.active.size(); ++slot) {
    auto& s = state.active[slot];
    const size_t first = next.tokens.size();
    expand_sentence(s, static_cast<int64_t>(slot), candidates, state.live, next, config, vocab);
    if (sentence_done(s, next, first, config)) {
      state.results[s.row] = best_of(std::move(s.finished), config.nbest);
      next.tokens.resize(first);
      next.log_probs.resize(first);
      next.origin.resize(first);
      next.next_token.resize(first);
    } else {
      pad_beam(next, first, config.beam);
      still_active.push_back(std::move(s));
    }
  }
  state.active = std::move(still_active);
  state.live = std::move(next);
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const at::Tensor& src,
                                                 const DecodeConfig& config) {
  config.validate();
  torch::NoGradGuard no_grad;
  detail::EvalModeGuard eval_mode(*model);
  const int64_t beam = config.beam;
  auto state = initial_state(detail::output_limits(model, src, config), beam);
  auto src_mask = model->make_src_mask(src);  // [batch, 1, 1, src_len]
  auto cache = model->decoder->start(model->encode(src, src_mask));
  const auto expand = at::arange(src.size(0), src.options().dtype(at::kLong))
                          .repeat_interleave(beam);  // [batch * beam]
  cache.select(expand);
  src_mask = src_mask.index_select(0, expand);  // [batch * beam, 1, 1, src_len]
  auto tokens = at::full({src.size(0) * beam, 1}, kBosId, src.options().dtype(at::kLong));
  while (!state.active.empty()) {
    const auto log_probs = detail::next_log_probs(model, tokens, cache, src_mask);  // [rows, V]
    advance(state, top_candidates(log_probs, state.live.log_probs, beam), config,
            log_probs.size(1));
    if (state.active.empty()) break;
    // Reorder (and shrink) the cache: live row r continues previous row origin[r].
    const auto index = detail::index_tensor(state.live.origin, src.device());  // [rows']
    cache.select(index);
    src_mask = src_mask.index_select(0, index);
    tokens = detail::index_tensor(state.live.next_token, src.device()).unsqueeze(1);
  }
  return std::move(state.results);
}

}  // namespace nmt
