// Lexically constrained beam search with dynamic beam allocation (Post & Vilar 2018, "Fast
// Lexically Constrained Decoding with Dynamic Beam Allocation for Neural Machine Translation").
// Same batch layout as beam_search.cpp: row r of the live batch is beam r % beam of the
// r / beam-th sentence still searched. The candidates are chosen on the CPU.
#include <torch/types.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "core/special_ids.h"
#include "decode/search.h"
#include "decode/search_internal.h"

namespace nmt::detail {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// How far a hypothesis has come through its sentence's constraints.
struct ConstraintState {
  std::vector<char> met;   ///< per constraint
  int64_t current = -1;    ///< the constraint in progress, or -1
  int64_t progress = 0;    ///< its tokens produced so far
  int64_t met_tokens = 0;  ///< tokens of the met constraints, plus `progress` (the bank)

  /// The state after `token`: it continues the constraint in progress or, failing that (which
  /// abandons it), starts the first unmet constraint that begins with it.
  ConstraintState after(int64_t token, const std::vector<std::vector<int64_t>>& phrases) const {
    ConstraintState s = *this;
    if (s.current >= 0) {
      const auto& phrase = phrases[s.current];
      if (phrase[s.progress] == token) {
        ++s.progress, ++s.met_tokens;
        if (s.progress == static_cast<int64_t>(phrase.size())) {
          s.met[s.current] = 1;
          s.current = -1, s.progress = 0;
        }
        return s;
      }
      s.met_tokens -= s.progress;
      s.current = -1, s.progress = 0;
    }
    for (size_t i = 0; i < phrases.size(); ++i) {
      if (s.met[i] || phrases[i].front() != token) continue;
      ++s.met_tokens;
      if (phrases[i].size() == 1) {
        s.met[i] = 1;
      } else {
        s.current = static_cast<int64_t>(i), s.progress = 1;
      }
      break;
    }
    return s;
  }

  int64_t unmet() const { return static_cast<int64_t>(std::count(met.begin(), met.end(), 0)); }
};

/// A sentence still being searched.
struct ConstrainedSentence {
  int64_t row = 0;    ///< input row
  int64_t limit = 0;  ///< output length limit (eos excluded)
  const std::vector<std::vector<int64_t>>* phrases = nullptr;
  int64_t total_tokens = 0;          ///< tokens of all its constraints
  std::vector<Hypothesis> finished;  ///< every constraint met
  std::vector<Hypothesis> cut;       ///< reached the limit with constraints unmet
};

/// One extension of a live row.
struct Candidate {
  int64_t origin = 0;
  int64_t token = 0;
  double log_prob = 0.0;
  ConstraintState state;
};

class ConstrainedBook {
 public:
  ConstrainedBook(const std::vector<int64_t>& limits, const DecodeConfig& config,
                  const std::vector<OutputGuide>& guides)
      : config_(config) {
    const auto sentences = static_cast<int64_t>(limits.size());
    results_.resize(limits.size());
    for (int64_t row = 0; row < sentences; ++row) {
      const auto& guide = guides[row];
      active_.push_back({row, limits[row], &guide.constraints, guide.constraint_tokens(), {}, {}});
    }
    live_.tokens.resize(static_cast<size_t>(sentences * config.beam));
    live_.log_probs.assign(live_.tokens.size(), kNegInf);
    for (int64_t s = 0; s < sentences; ++s) {
      live_.log_probs[s * config.beam] = 0.0;
      for (int64_t b = 0; b < config.beam; ++b) {
        states_.push_back({std::vector<char>(guides[s].constraints.size(), 0), -1, 0, 0});
      }
    }
  }

  bool empty() const { return active_.empty(); }
  const LiveBeams& live() const { return live_; }
  std::vector<std::vector<Hypothesis>> take_results() { return std::move(results_); }
  std::vector<int64_t> live_rows() const {
    std::vector<int64_t> rows;
    for (const auto& s : active_) rows.insert(rows.end(), config_.beam, s.row);
    return rows;
  }
  int64_t step() const { return static_cast<int64_t>(live_.tokens.front().size()); }

  /// log_probs [rows, vocab] of the next token (CPU float32, contiguous).
  void advance(const at::Tensor& log_probs) {
    LiveBeams next;
    std::vector<ConstraintState> next_states;
    std::vector<ConstrainedSentence> still_active;
    for (size_t slot = 0; slot < active_.size(); ++slot) {
      auto& s = active_[slot];
      const int64_t first_row = static_cast<int64_t>(slot) * config_.beam;
      const size_t first = next.tokens.size();
      auto chosen = allocate(s, candidates(s, log_probs, first_row));
      for (auto& c : chosen) {
        auto tokens = live_.tokens[c.origin];
        tokens.push_back(c.token);
        next.tokens.push_back(std::move(tokens));
        next.log_probs.push_back(c.log_prob);
        next.origin.push_back(c.origin);
        next.next_token.push_back(c.token);
        next_states.push_back(std::move(c.state));
      }
      // Only hypotheses that meet every constraint count as finished here.
      if (sentence_done(s.finished, next, first, s.limit, config_)) {
        results_[s.row] = s.finished.empty() ? best_cut(std::move(s.cut))
                                             : best_of(std::move(s.finished), config_.nbest);
        if (results_[s.row].empty()) results_[s.row].push_back(nothing_found(s));
        next.tokens.resize(first);
        next.log_probs.resize(first);
        next.origin.resize(first);
        next.next_token.resize(first);
        next_states.resize(first);
      } else {
        pad_beam(next, first, config_.beam);
        const ConstraintState padding = next_states[first];
        next_states.resize(next.tokens.size(), padding);
        still_active.push_back(std::move(s));
      }
    }
    active_ = std::move(still_active);
    live_ = std::move(next);
    states_ = std::move(next_states);
  }

 private:
  /// The sentence's candidates: its `beam` best extensions, each live row's best token, and
  /// each live row's constraint tokens (the next one of the constraint in progress, the first
  /// of each unmet one), without repeats.
  std::vector<Candidate> candidates(const ConstrainedSentence& s, const at::Tensor& log_probs,
                                    int64_t first_row) const {
    const int64_t vocab = log_probs.size(1);
    const auto block = log_probs.narrow(0, first_row, config_.beam);  // [beam, vocab]
    const float* values = block.data_ptr<float>();
    std::vector<double> live(live_.log_probs.begin() + first_row,
                             live_.log_probs.begin() + first_row + config_.beam);
    std::set<std::pair<int64_t, int64_t>> seen;  // (origin, token)
    std::vector<Candidate> result;
    const auto add = [&](int64_t b, int64_t token) {
      const int64_t origin = first_row + b;
      const double value = values[b * vocab + token];
      if (live[b] == kNegInf || value == kNegInf) return;
      if (!seen.emplace(origin, token).second) return;
      result.push_back({origin, token, live[b] + value, states_[origin].after(token, *s.phrases)});
    };
    const auto live_tensor = at::tensor(at::ArrayRef<double>(live), at::kDouble).unsqueeze(1);
    const auto total = (block.to(at::kDouble) + live_tensor).view({-1});  // [beam * vocab]
    const auto top = std::get<1>(total.topk(std::min(config_.beam, total.size(0)))).contiguous();
    for (int64_t i = 0; i < top.size(0); ++i) {
      const int64_t flat = top.data_ptr<int64_t>()[i];
      add(flat / vocab, flat % vocab);
    }
    const auto best = std::get<1>(block.max(-1)).contiguous();  // [beam]
    for (int64_t b = 0; b < config_.beam; ++b) {
      if (live[b] == kNegInf) continue;
      add(b, best.data_ptr<int64_t>()[b]);
      const auto& state = states_[first_row + b];
      if (state.current >= 0) add(b, (*s.phrases)[state.current][state.progress]);
      for (size_t i = 0; i < s.phrases->size(); ++i) {
        if (!state.met[i]) add(b, (*s.phrases)[i].front());
      }
    }
    return result;
  }

  /// Finishes the candidates that end (eos, or the length limit) and shares the beam among the
  /// others: banks by constraint tokens met, one hypothesis per bank per round, the fullest bank
  /// first, each bank's best first. Returns the chosen ones in that order.
  std::vector<Candidate> allocate(ConstrainedSentence& s, std::vector<Candidate> candidates) const {
    std::vector<std::vector<Candidate>> banks(static_cast<size_t>(s.total_tokens + 1));
    const double alpha = config_.length_penalty;
    for (auto& c : candidates) {
      const bool all_met = c.state.met_tokens == s.total_tokens;
      if (c.token == kEosId) {
        if (all_met) {
          s.finished.push_back(finish_hypothesis(live_.tokens[c.origin], c.log_prob, true, alpha));
        }
        continue;
      }
      if (static_cast<int64_t>(live_.tokens[c.origin].size()) + 1 >= s.limit) {
        auto tokens = live_.tokens[c.origin];
        tokens.push_back(c.token);
        auto h = finish_hypothesis(std::move(tokens), c.log_prob, false, alpha);
        h.unmet_constraints = c.state.unmet();
        (all_met ? s.finished : s.cut).push_back(std::move(h));
        continue;
      }
      banks[c.state.met_tokens].push_back(std::move(c));
    }
    for (auto& bank : banks) {
      std::stable_sort(bank.begin(), bank.end(), [](const Candidate& a, const Candidate& b) {
        return a.log_prob > b.log_prob;
      });
    }
    std::vector<Candidate> chosen;
    for (size_t round = 0; static_cast<int64_t>(chosen.size()) < config_.beam; ++round) {
      bool any = false;
      for (auto bank = banks.rbegin(); bank != banks.rend(); ++bank) {
        if (round >= bank->size() || static_cast<int64_t>(chosen.size()) >= config_.beam) continue;
        chosen.push_back(std::move((*bank)[round]));
        any = true;
      }
      if (!any) break;
    }
    return chosen;
  }

  /// The nbest of the hypotheses cut at the limit with constraints unmet: fewest unmet first,
  /// then by score.
  std::vector<Hypothesis> best_cut(std::vector<Hypothesis> cut) const {
    std::stable_sort(cut.begin(), cut.end(), [](const Hypothesis& a, const Hypothesis& b) {
      return a.unmet_constraints != b.unmet_constraints ? a.unmet_constraints < b.unmet_constraints
                                                        : a.score > b.score;
    });
    if (static_cast<int64_t>(cut.size()) > config_.nbest) cut.resize(config_.nbest);
    return cut;
  }

  /// No hypothesis was kept at all (every extension was impossible): an empty output that
  /// lacks every constraint.
  static Hypothesis nothing_found(const ConstrainedSentence& s) {
    Hypothesis h;
    h.log_prob = h.score = kNegInf;
    h.unmet_constraints = static_cast<int64_t>(s.phrases->size());
    return h;
  }

  DecodeConfig config_;
  std::vector<ConstrainedSentence> active_;
  LiveBeams live_;
  std::vector<ConstraintState> states_;  ///< per live row
  std::vector<std::vector<Hypothesis>> results_;
};

}  // namespace

std::vector<std::vector<Hypothesis>> constrained_beam_search_steps(
    const std::vector<int64_t>& limits, const DecodeConfig& config, const NextLogProbs& next,
    const std::vector<OutputGuide>& guides) {
  TORCH_CHECK(guides.size() == limits.size(), "constrained search: ", guides.size(), " guides for ",
              limits.size(), " sentences");
  ConstrainedBook book(limits, config, guides);
  while (!book.empty()) {
    auto log_probs = next(book.live());  // [rows, vocab]
    force_prefixes(log_probs, book.step(), row_guides(guides, book.live_rows()));
    book.advance(log_probs.to(at::kCPU, at::kFloat).contiguous());
  }
  return book.take_results();
}

}  // namespace nmt::detail
