#include "decode/mbr.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

namespace nmt {

std::vector<double> mbr_expected_utilities(const std::vector<std::string>& candidates,
                                           const std::vector<double>& log_probs,
                                           const std::string& metric) {
  if (candidates.size() != log_probs.size()) {
    throw Error("MBR: " + std::to_string(candidates.size()) + " candidates but " +
                std::to_string(log_probs.size()) + " log-probabilities");
  }
  if (metric != "bleu" && metric != "chrf") {
    throw Error("MBR metric '" + metric + "' is not valid: choose one of bleu, chrf");
  }
  const size_t n = candidates.size();
  std::vector<double> expected(n, 0.0);
  if (n == 0) return expected;
  // Softmax over the list, shifted by the maximum so the exponentials cannot overflow.
  const double top = *std::max_element(log_probs.begin(), log_probs.end());
  std::vector<double> weights(n);
  double total = 0.0;
  for (size_t j = 0; j < n; ++j) total += weights[j] = std::exp(log_probs[j] - top);
  for (double& w : weights) w /= total;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const double utility = metric == "bleu" ? sentence_bleu(candidates[i], candidates[j])
                                              : sentence_chrf(candidates[i], candidates[j]);
      expected[i] += weights[j] * utility;
    }
  }
  return expected;
}

}  // namespace nmt
