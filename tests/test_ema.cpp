// train/ema.h: the exponential moving average of the weights (train.ema_decay) is what
// validation sees and what the checkpoints hold; training goes on from its own weights, also
// through a resume.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "train/checkpoint.h"
#include "train/ema.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

TEST(WeightEma, FollowsTheWeightsWithItsWarmUpDecay) {
  auto w = at::zeros({3});
  WeightEma ema({w}, 0.9);
  EXPECT_DOUBLE_EQ(ema.decay_at(1), 2.0 / 11.0);  // the warm-up: early weights fade fast
  EXPECT_DOUBLE_EQ(ema.decay_at(1000), 0.9);
  w.fill_(1.0);
  ema.update(1);  // 2/11 · 0 + 9/11 · 1
  EXPECT_NEAR(ema.held()[0][0].item<double>(), 9.0 / 11.0, 1e-6);
  w.fill_(2.0);
  ema.update(1000);  // 0.9 · 9/11 + 0.1 · 2
  const double expected = 0.9 * 9.0 / 11.0 + 0.2;
  EXPECT_NEAR(ema.held()[0][1].item<double>(), expected, 1e-6);
  EXPECT_EQ(w[0].item<float>(), 2.0f);  // the weights themselves are untouched
}

TEST(WeightEma, SwapPutsTheAverageInAndBackOut) {
  auto w = at::full({2}, 5.0);
  WeightEma ema({w}, 0.5);
  w.fill_(7.0);
  ema.update(1000);  // average 6
  {
    const EmaWeightsIn in(&ema);
    EXPECT_TRUE(ema.swapped_in());
    EXPECT_EQ(w[0].item<float>(), 6.0f);
    EXPECT_EQ(ema.held()[0][0].item<float>(), 7.0f);  // the training weights, held aside
    EXPECT_THROW(ema.update(1001), Error);
  }
  EXPECT_FALSE(ema.swapped_in());
  EXPECT_EQ(w[0].item<float>(), 7.0f);
  EXPECT_EQ(ema.held()[0][0].item<float>(), 6.0f);
}

/// The model's parameters of a checkpoint, in order.
std::vector<at::Tensor> weights(const LoadedModel& loaded) { return loaded.model->parameters(); }

bool same(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return false;
  }
  return true;
}

Config ema_config(const fs::path& dir, int64_t steps) {
  Config config = test::step_config(dir, steps);
  config.train.ema_decay = 0.9;
  config.train.validate_every = 5;
  config.train.average_snapshots = 1;  // the training weights at the end, for comparison
  config.train.average_window = 0.1;
  return config;
}

// Checkpoints hold the average as the model; last.pt also the training weights, which the final
// snapshot (taken outside validation) equals; validation records say which weights they scored.
TEST(EmaTraining, CheckpointsHoldTheAverageAndLastPtTheTrainingWeightsToo) {
  const auto dir = test::temp_dir("ema_run");
  test::train(ema_config(dir, 12));
  const LoadedModel last = load_checkpoint(dir / "last.pt", at::kCPU);
  const LoadedModel snapshot = load_checkpoint(dir / "snapshot_12.pt", at::kCPU);
  ASSERT_EQ(last.state.training_weights.size(), weights(last).size());
  EXPECT_TRUE(same(last.state.training_weights, weights(snapshot)));
  EXPECT_FALSE(same(weights(last), weights(snapshot)));  // the model is the average
  EXPECT_TRUE(snapshot.state.training_weights.empty());
  const LoadedModel best = load_checkpoint(dir / "best.pt", at::kCPU);
  EXPECT_TRUE(best.state.training_weights.empty());  // no optimizer, nothing to resume
  EXPECT_TRUE(load_checkpoint(dir / "averaged.pt", at::kCPU).state.training_weights.empty());
  const auto valid = test::records(dir, "valid");
  ASSERT_FALSE(valid.empty());
  EXPECT_EQ(valid.back()["weights"], "ema");
  // The last validation scored last.pt's model: the same loss again.
  EXPECT_EQ(valid.back()["step"], 12);
}

// A resume goes on from the training weights and keeps the average: bit for bit the same run.
TEST(EmaTraining, AResumeReproducesTheRunAndItsAverage) {
  const auto dir = test::temp_dir("ema_resume");
  const Config whole = ema_config(dir / "whole", 12);
  test::expect_resume_reproduces(whole, dir / "halves", 7);
  const LoadedModel a = load_checkpoint(dir / "whole" / "last.pt", at::kCPU);
  const LoadedModel b = load_checkpoint(dir / "halves" / "last.pt", at::kCPU);
  EXPECT_TRUE(same(weights(a), weights(b)));
  EXPECT_TRUE(same(a.state.training_weights, b.state.training_weights));
}

// Turned off on a resume, training goes on from the training weights, not from the average.
TEST(EmaTraining, TurnedOffOnAResumeTrainingGoesOnFromItsOwnWeights) {
  const auto dir = test::temp_dir("ema_off");
  Config config = ema_config(dir, 6);
  test::train(config);
  const auto training = load_checkpoint(dir / "last.pt", at::kCPU).state.training_weights;
  config.train.ema_decay = 0.0;
  config.train.max_steps = 6;  // nothing to train: the resume saves last.pt again as it is
  test::train(config, /*resume=*/true);
  const LoadedModel last = load_checkpoint(dir / "last.pt", at::kCPU);
  EXPECT_TRUE(last.state.training_weights.empty());
  EXPECT_TRUE(same(weights(last), training));
}

TEST(EmaTraining, ADecayOutsideZeroToOneIsOneError) {
  Config config = test::tiny_config(test::temp_dir("ema_bad"));
  for (double bad : {1.0, -0.1, 1.5}) {
    config.train.ema_decay = bad;
    try {
      config.validate();
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("train.ema_decay"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nmt
