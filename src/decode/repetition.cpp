#include "decode/repetition.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace nmt {

bool guards_repetition(const DecodeConfig& config) {
  return config.no_repeat_ngram_size > 0 || config.repetition_penalty != 1.0;
}

std::vector<int64_t> banned_by_ngrams(const std::vector<int64_t>& history, int64_t n) {
  std::vector<int64_t> banned;
  const auto size = static_cast<int64_t>(history.size());
  if (n <= 0 || size < n - 1) return banned;
  std::unordered_set<int64_t> seen;
  // The last n - 1 tokens, against every earlier window of n - 1 followed by a token.
  const int64_t context = n - 1;
  for (int64_t start = 0; start + context < size; ++start) {
    if (!std::equal(history.begin() + start, history.begin() + start + context,
                    history.end() - context)) {
      continue;
    }
    const int64_t token = history[size_t(start + context)];
    if (seen.insert(token).second) banned.push_back(token);
  }
  return banned;
}

void guard_repetition(at::Tensor& log_probs,
                      const std::vector<const std::vector<int64_t>*>& histories,
                      const DecodeConfig& config) {
  if (!guards_repetition(config)) return;
  TORCH_CHECK(int64_t(histories.size()) == log_probs.size(0),
              "guard_repetition: ", histories.size(), " histories for ", log_probs.size(0),
              " rows");
  std::vector<int64_t> penalty_rows, penalty_tokens, ban_rows, ban_tokens;
  for (size_t r = 0; r < histories.size(); ++r) {
    if (histories[r] == nullptr) continue;  // a row the guards leave alone (a forced prefix)
    const auto& history = *histories[r];
    if (config.repetition_penalty != 1.0) {
      std::unordered_set<int64_t> seen;
      for (const int64_t token : history) {
        if (!seen.insert(token).second) continue;
        penalty_rows.push_back(int64_t(r));
        penalty_tokens.push_back(token);
      }
    }
    for (const int64_t token : banned_by_ngrams(history, config.no_repeat_ngram_size)) {
      ban_rows.push_back(int64_t(r));
      ban_tokens.push_back(token);
    }
  }
  if (penalty_rows.empty() && ban_rows.empty()) return;
  const auto index = [&](const std::vector<int64_t>& values) {
    return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(log_probs.device());
  };
  if (!penalty_rows.empty()) {
    const auto rows = index(penalty_rows), tokens = index(penalty_tokens);
    log_probs.index_put_({rows, tokens},
                         log_probs.index({rows, tokens}) * config.repetition_penalty);
  }
  if (!ban_rows.empty()) {
    log_probs.index_put_(
        {index(ban_rows), index(ban_tokens)},
        at::scalar_tensor(-std::numeric_limits<float>::infinity(), log_probs.options()));
  }
  log_probs = at::log_softmax(log_probs, -1);
}

}  // namespace nmt
