#include "decode/mbr.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

namespace nmt {

std::vector<double> mbr_expected_utilities(const std::vector<std::string>& candidates,
                                           const std::vector<double>& log_probs, MbrMetric metric) {
  if (candidates.size() != log_probs.size()) {
    throw Error("MBR: " + std::to_string(candidates.size()) + " candidates but " +
                std::to_string(log_probs.size()) + " log-probabilities");
  }
  std::vector<double> weights(candidates.size());
  if (!candidates.empty()) {
    // Softmax over the list, shifted by the maximum so the exponentials cannot overflow.
    const double top = *std::max_element(log_probs.begin(), log_probs.end());
    double total = 0.0;
    for (size_t j = 0; j < weights.size(); ++j) total += weights[j] = std::exp(log_probs[j] - top);
    for (double& w : weights) w /= total;
  }
  return mbr_expected_utilities(candidates, candidates, weights, metric);
}

std::vector<double> mbr_expected_utilities(const std::vector<std::string>& candidates,
                                           const std::vector<std::string>& references,
                                           const std::vector<double>& weights, MbrMetric metric) {
  if (references.size() != weights.size()) {
    throw Error("MBR: " + std::to_string(references.size()) + " pseudo-references but " +
                std::to_string(weights.size()) + " weights");
  }
  double total = 0.0;
  for (const double w : weights) {
    if (!(w >= 0.0)) throw Error("MBR: weight " + std::to_string(w) + " is not >= 0");
    total += w;
  }
  if (!weights.empty() && std::abs(total - 1.0) > 1e-6) {
    throw Error("MBR: the weights sum to " + std::to_string(total) + ", not 1");
  }
  std::vector<double> expected(candidates.size(), 0.0);
  for (size_t i = 0; i < candidates.size(); ++i) {
    for (size_t j = 0; j < references.size(); ++j) {
      if (weights[j] == 0.0) continue;
      const double utility = metric == MbrMetric::kBleu
                                 ? sentence_bleu(candidates[i], references[j])
                                 : sentence_chrf(candidates[i], references[j]);
      expected[i] += weights[j] * utility;
    }
  }
  return expected;
}

}  // namespace nmt
