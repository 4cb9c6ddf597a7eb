// Beam search (decode/search.h), batched over sentences × beam with one incremental decoder
// cache. Row r of the live batch is beam r % beam of the r / beam-th sentence still searched.
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/special_ids.h"
#include "cpu/kernels.h"
#include "decode/search.h"
#include "decode/search_internal.h"

namespace nmt {
namespace {

using detail::LiveBeams;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// A sentence still being searched.
struct SentenceSearch {
  int64_t row = 0;    ///< input row
  int64_t limit = 0;  ///< output length limit (eos excluded)
  std::vector<Hypothesis> finished;
};

/// One sentence's candidates, best first: live row first_row + ids[c] / vocab extended by token
/// ids[c] % vocab has log-prob values[c].
struct CandidateRow {
  const double* values;
  const int64_t* ids;
  int64_t count;
  int64_t first_row;
  int64_t vocab;
};

/// The best candidates of every sentence: top 2·beam over beam × vocab, on the CPU.
struct Candidates {
  at::Tensor log_probs;  ///< [sentences, 2 * beam] double
  at::Tensor flat_ids;   ///< [sentences, 2 * beam] int64, beam_index * vocab + token
  int64_t vocab = 0;

  CandidateRow row(int64_t slot, int64_t beam) const {
    const int64_t count = log_probs.size(1);
    return {log_probs.data_ptr<double>() + slot * count,
            flat_ids.data_ptr<int64_t>() + slot * count, count, slot * beam, vocab};
  }
};

/// log_probs [sentences * beam, vocab] of the next token -> the top candidates.
Candidates top_candidates(const at::Tensor& log_probs, const std::vector<double>& live_log_probs,
                          int64_t beam) {
  const int64_t vocab = log_probs.size(1);
  const int64_t count = std::min(2 * beam, beam * vocab);
  if (log_probs.device().is_cpu() && log_probs.scalar_type() == at::kFloat) {
    auto top = cpu::top_k_grouped(log_probs, live_log_probs, beam, count);
    return {top.values, top.ids, vocab};
  }
  const auto live = at::tensor(at::ArrayRef<double>(live_log_probs), at::kDouble)
                        .to(log_probs.device(), at::kFloat)
                        .unsqueeze(1);                             // [rows, 1]
  const auto total = (live + log_probs).view({-1, beam * vocab});  // [sentences, beam * vocab]
  // 2·beam candidates always hold at least `beam` that are not eos (one eos per beam at most).
  auto [values, ids] = total.topk(count, -1);
  return {values.to(at::kCPU, at::kDouble).contiguous(), ids.to(at::kCPU).contiguous(), vocab};
}

/// The CPU side of a batched beam search: the sentences still searched (in live-batch order),
/// their live hypotheses (`beam` rows each) and the results of the sentences already done.
class BeamBook {
 public:
  BeamBook(const std::vector<int64_t>& limits, const DecodeConfig& config) : config_(config) {
    const auto sentences = static_cast<int64_t>(limits.size());
    for (int64_t row = 0; row < sentences; ++row) active_.push_back({row, limits[row], {}});
    results_.resize(limits.size());
    // Only the first row of each sentence is usable at first: the others would duplicate it.
    live_.tokens.resize(static_cast<size_t>(sentences * config.beam));
    live_.log_probs.assign(live_.tokens.size(), kNegInf);
    for (int64_t s = 0; s < sentences; ++s) live_.log_probs[s * config.beam] = 0.0;
  }

  bool empty() const { return active_.empty(); }
  /// The input row of each live row (`beam` rows per sentence still searched).
  std::vector<int64_t> live_rows() const {
    std::vector<int64_t> rows;
    for (const auto& s : active_) rows.insert(rows.end(), config_.beam, s.row);
    return rows;
  }
  /// The 0-based output position the next token takes.
  int64_t step() const { return static_cast<int64_t>(live_.tokens.front().size()); }
  const LiveBeams& live() const { return live_; }
  std::vector<std::vector<Hypothesis>> take_results() { return std::move(results_); }

  /// Extends every active sentence by one token; done sentences leave the live batch. Then
  /// live().origin says which previous row each live row continues.
  void advance(const Candidates& candidates) {
    LiveBeams next;
    std::vector<SentenceSearch> still_active;
    for (size_t slot = 0; slot < active_.size(); ++slot) {
      auto& s = active_[slot];
      const size_t first = next.tokens.size();
      expand(s, candidates.row(static_cast<int64_t>(slot), config_.beam), next);
      if (done(s, next, first)) {
        results_[s.row] = detail::best_of(std::move(s.finished), config_.nbest);
        next.tokens.resize(first);
        next.log_probs.resize(first);
        next.origin.resize(first);
        next.next_token.resize(first);
      } else {
        detail::pad_beam(next, first, config_.beam);
        still_active.push_back(std::move(s));
      }
    }
    active_ = std::move(still_active);
    live_ = std::move(next);
  }

 private:
  /// Eos among the top `beam` candidates finishes a hypothesis; the best `beam` others continue
  /// (or finish, at the length limit), appended to `next`.
  void expand(SentenceSearch& s, const CandidateRow& row, LiveBeams& next) const {
    int64_t continued = 0;
    for (int64_t c = 0; c < row.count && continued < config_.beam; ++c) {
      if (row.values[c] == kNegInf) break;  // sorted: the rest extend unused rows
      const int64_t origin = row.first_row + row.ids[c] / row.vocab;
      const int64_t token = row.ids[c] % row.vocab;
      if (token == kEosId) {
        if (c < config_.beam) {
          s.finished.push_back(detail::finish_hypothesis(live_.tokens[origin], row.values[c], true,
                                                         config_.length_penalty));
        }
        continue;
      }
      auto tokens = live_.tokens[origin];
      tokens.push_back(token);
      ++continued;
      if (static_cast<int64_t>(tokens.size()) >= s.limit) {
        // At the length limit. All live rows share a length: the sentence ends this step.
        s.finished.push_back(detail::finish_hypothesis(std::move(tokens), row.values[c], false,
                                                       config_.length_penalty));
        continue;
      }
      next.tokens.push_back(std::move(tokens));
      next.log_probs.push_back(row.values[c]);
      next.origin.push_back(origin);
      next.next_token.push_back(token);
    }
  }

  /// Whether sentence `s`, whose live hypotheses are rows [first, end) of `next`, is done:
  /// `beam` hypotheses finished, none live, or its nbest-th best cannot be beaten.
  bool done(const SentenceSearch& s, const LiveBeams& next, size_t first) const {
    return detail::sentence_done(s.finished, next, first, s.limit, config_);
  }

  DecodeConfig config_;
  std::vector<SentenceSearch> active_;
  LiveBeams live_;
  std::vector<std::vector<Hypothesis>> results_;  ///< per input row, once done
};

}  // namespace

namespace detail {

Hypothesis finish_hypothesis(std::vector<int64_t> tokens, double log_prob, bool has_eos,
                             double alpha) {
  const auto length = static_cast<int64_t>(tokens.size()) + (has_eos ? 1 : 0);
  return {std::move(tokens), log_prob, log_prob / gnmt_length_penalty(length, alpha)};
}

std::vector<Hypothesis> best_of(std::vector<Hypothesis> finished, int64_t nbest) {
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int64_t>(finished.size()) > nbest) finished.resize(nbest);
  return finished;
}

bool sentence_done(const std::vector<Hypothesis>& finished, const LiveBeams& next, size_t first,
                   int64_t limit, const DecodeConfig& config) {
  const auto count = static_cast<int64_t>(finished.size());
  if (first == next.tokens.size() || count >= config.beam) return true;
  if (count < config.nbest) return false;
  const auto length = static_cast<int64_t>(next.tokens[first].size());
  const double best_live = *std::max_element(
      next.log_probs.begin() + static_cast<std::ptrdiff_t>(first), next.log_probs.end());
  std::vector<double> scores;
  for (const auto& h : finished) scores.push_back(h.score);
  std::nth_element(scores.begin(), scores.begin() + (config.nbest - 1), scores.end(),
                   std::greater<double>());
  // The penalty that bounds the score a live hypothesis of `length` tokens (eos excluded) can
  // still reach: log-probs are <= 0 and only fall as it grows, so its best score is its
  // log-prob over the largest penalty among the lengths it may still have (exact search: up to
  // the limit). Early stopping takes the penalty of the next length only, as if it ended now:
  // a longer hypothesis that only the penalty would lift above the finished ones is given up.
  const double alpha = config.length_penalty;
  double penalty = gnmt_length_penalty(length + 1, alpha);
  if (!config.early_stopping) penalty = std::max(penalty, gnmt_length_penalty(limit + 1, alpha));
  return scores[config.nbest - 1] >= best_live / penalty;
}

void pad_beam(LiveBeams& next, size_t first, int64_t beam) {
  while (static_cast<int64_t>(next.tokens.size() - first) < beam) {
    next.tokens.push_back(next.tokens[first]);
    next.log_probs.push_back(kNegInf);
    next.origin.push_back(next.origin[first]);
    next.next_token.push_back(kPadId);
  }
}

std::vector<std::vector<Hypothesis>> beam_search_steps(const std::vector<int64_t>& limits,
                                                       const DecodeConfig& config,
                                                       const NextLogProbs& next,
                                                       const std::vector<OutputGuide>& guides) {
  for (const auto& guide : guides) {
    if (!guide.constraints.empty()) {
      return constrained_beam_search_steps(limits, config, next, guides);
    }
  }
  BeamBook book(limits, config);
  while (!book.empty()) {
    auto log_probs = next(book.live());  // [rows, vocab]
    const auto guided =
        guides.empty() ? std::vector<const OutputGuide*>() : row_guides(guides, book.live_rows());
    if (guards_repetition(config)) {
      std::vector<const std::vector<int64_t>*> histories;
      for (const auto& tokens : book.live().tokens) histories.push_back(&tokens);
      guard_unforced(log_probs, histories, guided, book.step(), config);
    }
    if (!guides.empty()) force_prefixes(log_probs, book.step(), guided);
    book.advance(top_candidates(log_probs, book.live().log_probs, config.beam));
  }
  return book.take_results();
}

}  // namespace detail

std::vector<std::vector<Hypothesis>> beam_search(const Ensemble& models, const at::Tensor& src,
                                                 const DecodeConfig& config,
                                                 const std::vector<OutputGuide>& guides) {
  config.validate();
  if (src.size(0) == 0) return {};
  TORCH_CHECK(guides.empty() || static_cast<int64_t>(guides.size()) == src.size(0),
              "beam_search: ", guides.size(), " guides for ", src.size(0), " rows");
  torch::NoGradGuard no_grad;
  EnsembleState state(models, src, detail::guide_ids(guides));
  // The first step decodes one row per sentence: its beam's rows would all be the same. Then
  // each sentence gets `beam` rows ([batch * beam]), its encoder output kept once.
  const auto bos = at::full({src.size(0), 1}, kBosId, src.options().dtype(at::kLong));
  int64_t rows = src.size(0) * config.beam;
  const auto next = [&](const LiveBeams& live) {
    if (live.origin.empty()) {
      const at::Tensor first = state.next_log_probs(bos);  // [batch, V]
      state.group_rows(config.beam);
      return first.repeat_interleave(config.beam, 0);  // [batch * beam, V]
    }
    // Reorder (and shrink) the caches: live row r continues previous row origin[r]. Every live
    // sentence holds `beam` consecutive rows whose origins lie in its own previous rows
    // (pad_beam), so while no sentence leaves (the row count stays) each row keeps its source:
    // the encoder's keys and values, the largest part of the cache, stay in place.
    const bool same_sources = static_cast<int64_t>(live.origin.size()) == rows;
    rows = static_cast<int64_t>(live.origin.size());
    state.select(detail::index_tensor(live.origin, src.device()), same_sources);  // [rows]
    const auto tokens = detail::index_tensor(live.next_token, src.device()).unsqueeze(1);
    return state.next_log_probs(tokens);  // [rows, V]
  };
  return detail::beam_search_steps(detail::output_limits(models, src, config), config, next,
                                   guides);
}

}  // namespace nmt
