// train/optimizer.cpp: parameter groups, weight decay, state, clipping (the fused step itself:
// test_cpu_kernels.cpp).
#include <cmath>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config.h"
#include "optimizer_test_util.h"
#include "train/optimizer.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(Optimizer, WeightDecayOnPicksMatricesOrLinearWeights) {
  const auto matrix = torch::zeros({4, 3}), vector = torch::zeros({3});
  for (const char* decay_on : {"all", "matrices", "linear"}) {
    EXPECT_TRUE(decays("decoder.layers.1.feedforward.fc_2.weight", matrix,
                       require_choice<DecayOn>("decay_on", decay_on)))
        << decay_on;
  }
  EXPECT_TRUE(decays("decoder.layers.1.feedforward.fc_2.bias", vector, DecayOn::kAll));
  EXPECT_FALSE(decays("decoder.layers.1.feedforward.fc_2.bias", vector, DecayOn::kMatrices));
  EXPECT_FALSE(decays("encoder.final_norm.weight", vector, DecayOn::kLinear));
  EXPECT_TRUE(decays("encoder.embeddings.tokens.weight", matrix, DecayOn::kMatrices));
  EXPECT_FALSE(decays("encoder.embeddings.tokens.weight", matrix, DecayOn::kLinear));
  EXPECT_FALSE(decays("decoder.embeddings.positions.weight", matrix, DecayOn::kLinear));
}

/// With zero gradients Adam's update is 0, so one step shows the decay alone: the decayed
/// parameters shrink by 1 - lr * weight_decay, the exempt ones do not move.
TEST(Optimizer, ExemptParametersAreNotDecayed) {
  TrainConfig config;
  config.lr = 0.01;
  config.weight_decay = 0.5;
  config.weight_decay_on = DecayOn::kLinear;
  auto parameters = adam_parameters();
  const auto before = clones(parameters);
  auto optimizer = make_optimizer(parameters, config);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  for (auto& p : parameters.values()) p.mutable_grad() = torch::zeros_like(p);
  optimizer_step(*optimizer, 1.0);
  for (const auto& item : parameters) {
    const bool decayed =
        item.value().dim() == 2 && item.key().find("embeddings") == std::string::npos;
    const auto expected = before[item.key()] * (decayed ? 1.0f - 0.01f * 0.5f : 1.0f);
    EXPECT_TRUE(torch::allclose(item.value(), expected, 1e-6, 1e-7)) << item.key();
  }
}

/// A resumed run rebuilds the optimizer from the config and loads the saved state: with two
/// groups the next step must be the one the uninterrupted optimizer takes.
TEST(Optimizer, GroupedStateSurvivesSaveAndLoad) {
  TrainConfig config;
  config.lr = 1e-2;
  config.weight_decay = 0.1;
  config.weight_decay_on = DecayOn::kMatrices;
  auto parameters = adam_parameters();
  auto optimizer = make_optimizer(parameters, config);
  const auto set_gradients = [](torch::OrderedDict<std::string, at::Tensor>& named, int seed) {
    torch::manual_seed(seed);
    for (auto& p : named.values()) p.mutable_grad() = torch::randn_like(p);
  };
  set_gradients(parameters, 1);
  optimizer_step(*optimizer, 1.0);
  std::stringstream saved;
  torch::save(*optimizer, saved);

  auto resumed_parameters = clones(parameters);
  auto resumed = make_optimizer(resumed_parameters, config);
  torch::load(*resumed, saved);
  set_gradients(parameters, 2);
  set_gradients(resumed_parameters, 2);
  optimizer_step(*optimizer, 1.0);
  optimizer_step(*resumed, 1.0);
  for (const auto& item : parameters) {
    EXPECT_TRUE(torch::equal(item.value(), resumed_parameters[item.key()])) << item.key();
  }
}

TEST(Optimizer, ClearGradientsLetsTheNextBackwardStartFresh) {
  const auto named = adam_parameters();
  auto parameters = named.values();
  auto optimizer = make_optimizer(named, TrainConfig{});
  (parameters[2] * 3.0).sum().backward();
  clear_gradients(*optimizer);
  EXPECT_FALSE(parameters[2].grad().defined());
  (parameters[2] * 2.0).sum().backward();
  EXPECT_TRUE(torch::equal(parameters[2].grad(), torch::full({7}, 2.0f)));  // not 3 + 2
}

TEST(Optimizer, ClipScaleIsClipGradNormsCoefficient) {
  auto parameters = adam_parameters().values();
  for (auto& p : parameters) p.mutable_grad() = torch::randn_like(p);
  const auto before = parameters[0].grad().clone();
  double norm = 0.0;
  for (auto& p : parameters) norm += p.grad().pow(2).sum().item<double>();
  norm = std::sqrt(norm);
  const double expected = 1.0 / (norm + 1e-6);
  EXPECT_NEAR(clip_scale(parameters, 1.0), expected, 1e-6 * expected);  // float32 norms
  EXPECT_DOUBLE_EQ(clip_scale(parameters, 10.0 * norm), 1.0);  // already within: no scaling
  EXPECT_DOUBLE_EQ(clip_scale(parameters, 0.0), 1.0);          // clipping off
  EXPECT_TRUE(torch::equal(parameters[0].grad(), before));     // gradients untouched
}
}  // namespace
}  // namespace nmt
