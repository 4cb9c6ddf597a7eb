#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/loss.h"
#include "train/schedule.h"
#include "train/validation.h"

namespace nmt {
namespace {

TEST(Schedule, InverseSqrtWarmsUpLinearlyThenDecays) {
  TrainConfig t;
  t.lr = 1e-3;
  t.warmup_steps = 100;
  EXPECT_DOUBLE_EQ(learning_rate(t, 1), 1e-5);
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 100), 1e-3);        // peak at the end of warmup
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3 * 0.5);  // sqrt(100 / 400)
  t.schedule = "constant";
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3);
}

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

TEST(Validation, MetricDirection) {
  const double nan = std::nan("");
  EXPECT_TRUE(improves("bleu", 20.0, nan));
  EXPECT_TRUE(improves("bleu", 21.0, 20.0));
  EXPECT_FALSE(improves("bleu", 19.0, 20.0));
  EXPECT_TRUE(improves("loss", 1.5, 2.0));
  EXPECT_FALSE(improves("loss", 2.5, 2.0));
  EXPECT_FALSE(improves("loss", nan, 2.0));
}

}  // namespace
}  // namespace nmt
