// train/loss.cpp: label-smoothed cross-entropy and R-Drop's symmetric KL against their
// definitions and LibTorch (the hand-written kernels behind them: test_cpu_kernels.cpp).
#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/loss.h"

namespace nmt {
namespace {

TEST(Loss, LabelSmoothingMatchesTheDefinition) {
  torch::manual_seed(0);
  const auto logits = torch::randn({5, 7});
  const auto targets = torch::tensor({0, 3, 6, 2, 2}, torch::kLong);
  const double eps = 0.1;
  // Independent: the smoothed target distribution q = (1 - eps) one_hot + eps / V, loss = -Σ q log
  // p.
  const auto q = torch::full({5, 7}, eps / 7)
                     .scatter_add(1, targets.unsqueeze(1), torch::full({5, 1}, 1.0 - eps));
  const auto expected = -(q * torch::log_softmax(logits, -1)).sum();
  const auto sums = label_smoothed_cross_entropy(logits, targets, eps);
  EXPECT_NEAR(sums.loss.item<double>(), expected.item<double>(), 1e-5);
  const auto nll = torch::nn::functional::cross_entropy(
      logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  EXPECT_NEAR(sums.nll.item<double>(), nll.item<double>(), 1e-5);
  EXPECT_NEAR(label_smoothed_cross_entropy(logits, targets, 0.0).loss.item<double>(),
              nll.item<double>(), 1e-5);
}

// R-Drop's consistency term: the reference and the dispatching function against torch's kl_div
// both ways, and zero for equal distributions (logits differing by a constant per row).
TEST(Loss, SymmetricKlMatchesKlDivBothWays) {
  torch::manual_seed(4);
  const auto p_logits = 3.0 * torch::randn({6, 11}), q_logits = 3.0 * torch::randn({6, 11});
  const auto log_p = torch::log_softmax(p_logits, -1), log_q = torch::log_softmax(q_logits, -1);
  namespace F = torch::nn::functional;
  const auto sum = F::KLDivFuncOptions().reduction(torch::kSum);
  const double expected =
      0.5 *
      (F::kl_div(log_q, log_p.exp(), sum) + F::kl_div(log_p, log_q.exp(), sum)).item<double>();
  const auto stacked = torch::cat({p_logits, q_logits}, 0);
  EXPECT_NEAR(symmetric_kl_sum_reference(stacked).item<double>(), expected, 1e-5 * expected);
  EXPECT_NEAR(symmetric_kl_sum(stacked).item<double>(), expected, 1e-5 * expected);
  EXPECT_GT(expected, 0.0);
  EXPECT_NEAR(symmetric_kl_sum(torch::cat({p_logits, p_logits + 5.0}, 0)).item<double>(), 0.0,
              1e-5);
  EXPECT_THROW(symmetric_kl_sum(torch::zeros({3, 4})), c10::Error);
}
}  // namespace
}  // namespace nmt
