// train/ema.h: the exponential moving average of the weights (train.ema_decay) is what
// validation sees and what the checkpoints hold; training goes on from its own weights, also
// through a resume.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/dataset.h"
#include "train/checkpoint.h"
#include "train/ema.h"
#include "train/validation.h"
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

/// The training weights `path` holds beside its model.
std::vector<at::Tensor> training_weights(const fs::path& path) {
  return load_training_weights(path, weights(load_checkpoint(path, at::kCPU)));
}

// Checkpoints hold the average as the model; last.pt also the training weights, which the final
// snapshot (taken outside validation) equals; validation scored the average.
TEST(EmaTraining, CheckpointsHoldTheAverageAndLastPtTheTrainingWeightsToo) {
  const auto dir = test::temp_dir("ema_run");
  Config config = ema_config(dir, 12);
  config.train.keep_checkpoints = 2;
  test::train(config);
  LoadedModel last = load_checkpoint(dir / "last.pt", at::kCPU);
  const LoadedModel snapshot = load_checkpoint(dir / "snapshot_12.pt", at::kCPU);
  const auto training = training_weights(dir / "last.pt");
  ASSERT_EQ(training.size(), weights(last).size());
  EXPECT_TRUE(same(training, weights(snapshot)));
  EXPECT_FALSE(same(weights(last), weights(snapshot)));  // the model is the average
  EXPECT_TRUE(load_checkpoint(dir / "last.pt", at::kCPU).state.training_weights.empty());
  for (const char* name : {"snapshot_12.pt", "best.pt", "step_10.pt", "averaged.pt"}) {
    EXPECT_TRUE(training_weights(dir / name).empty()) << name;  // no optimizer: nothing resumes
  }
  // step_10.pt holds the average of step 10 (and last.pt that of step 12).
  const LoadedModel step10 = load_checkpoint(dir / "step_10.pt", at::kCPU);
  EXPECT_FALSE(same(weights(step10), weights(last)));
  // The final validation scored last.pt's model, the average.
  const auto valid = test::records(dir, "valid");
  ASSERT_FALSE(valid.empty());
  EXPECT_EQ(valid.back()["weights"], "ema");
  EXPECT_EQ(valid.back()["step"], 12);
  const auto split = load_corpus(config.data, config.data.valid.front(), last.tokenizer);
  const double loss = validate(last.model, last.tokenizer, split, last.config, at::kCPU).loss();
  EXPECT_NEAR(valid.back()["loss"].get<double>(), loss, 1e-6 * loss);
}

// Turned on when resuming a run without it, the average starts at last.pt's weights.
TEST(EmaTraining, TurnedOnOnAResumeItStartsAtTheCheckpointsWeights) {
  const auto dir = test::temp_dir("ema_on");
  Config config = ema_config(dir, 6);
  config.train.ema_decay = 0.0;
  test::train(config);
  const auto before = weights(load_checkpoint(dir / "last.pt", at::kCPU));
  config.train.ema_decay = 0.9;  // nothing to train: the resume saves last.pt again
  test::train(config, /*resume=*/true);
  EXPECT_TRUE(same(weights(load_checkpoint(dir / "last.pt", at::kCPU)), before));
  EXPECT_TRUE(same(training_weights(dir / "last.pt"), before));
}

// A resume goes on from the training weights and keeps the average: bit for bit the same run.
TEST(EmaTraining, AResumeReproducesTheRunAndItsAverage) {
  const auto dir = test::temp_dir("ema_resume");
  const Config whole = ema_config(dir / "whole", 12);
  test::expect_resume_reproduces(whole, dir / "halves", 7);
  const LoadedModel a = load_checkpoint(dir / "whole" / "last.pt", at::kCPU);
  const LoadedModel b = load_checkpoint(dir / "halves" / "last.pt", at::kCPU);
  EXPECT_TRUE(same(weights(a), weights(b)));
  EXPECT_TRUE(same(training_weights(dir / "whole" / "last.pt"),
                   training_weights(dir / "halves" / "last.pt")));
}

// Turned off on a resume, training goes on from the training weights, not from the average.
TEST(EmaTraining, TurnedOffOnAResumeTrainingGoesOnFromItsOwnWeights) {
  const auto dir = test::temp_dir("ema_off");
  Config config = ema_config(dir, 6);
  test::train(config);
  const auto training = training_weights(dir / "last.pt");
  config.train.ema_decay = 0.0;
  config.train.max_steps = 6;  // nothing to train: the resume saves last.pt again as it is
  test::train(config, /*resume=*/true);
  EXPECT_TRUE(training_weights(dir / "last.pt").empty());
  EXPECT_TRUE(same(weights(load_checkpoint(dir / "last.pt", at::kCPU)), training));
}

// Killed between last.pt and best.pt: the resume's repair writes last.pt's model, the average,
// into best.pt, with the average on or turned off (then training goes on from other weights).
TEST(EmaTraining, TheBestPtRepairWritesTheAverage) {
  for (const double decay_on_resume : {0.9, 0.0}) {
    const auto dir = test::temp_dir("ema_best_" + std::to_string(decay_on_resume));
    const fs::path run = dir / "run";
    Config config = ema_config(run, 5);
    config.train.keep_checkpoints = 0;
    test::train(config);
    fs::copy_file(run / "best.pt", dir / "best_5.pt");
    config.train.max_steps = 10;
    test::train(config, /*resume=*/true);
    ASSERT_EQ(read_checkpoint_state(run / "best.pt").step, 10);  // the loss still falls
    const auto average = weights(load_checkpoint(run / "last.pt", at::kCPU));
    fs::copy_file(dir / "best_5.pt", run / "best.pt", fs::copy_options::overwrite_existing);
    config.train.ema_decay = decay_on_resume;
    test::train(config, /*resume=*/true);
    EXPECT_EQ(read_checkpoint_state(run / "best.pt").step, 10);
    EXPECT_TRUE(same(weights(load_checkpoint(run / "best.pt", at::kCPU)), average))
        << "decay on resume " << decay_on_resume;
  }
}

// Fine-tuning that keeps the parent's Adam moments starts from the weights they belong to, the
// parent's training weights; its first validation (at step 0) scores those.
TEST(EmaTraining, FineTuningWithTheOptimizerStartsFromTheTrainingWeights) {
  const auto dir = test::temp_dir("ema_finetune");
  test::train(ema_config(dir / "parent", 5));
  Config child = ema_config(dir / "child", 1);
  child.train.ema_decay = 0.0;
  child.train.init_keep = InitKeep::kOptimizer;
  child.train.validate_at_start = true;
  std::ostringstream console;
  Trainer(child, /*resume=*/false, console, dir / "parent" / "last.pt").run();
  const auto valid = test::records(dir / "child", "valid");
  ASSERT_FALSE(valid.empty());
  ASSERT_EQ(valid.front()["step"], 0);
  LoadedModel parent = load_checkpoint(dir / "parent" / "last.pt", at::kCPU);
  const auto training = training_weights(dir / "parent" / "last.pt");
  {
    torch::NoGradGuard no_grad;
    const auto params = weights(parent);
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(training[i]);
  }
  const auto split =
      load_corpus(parent.config.data, parent.config.data.valid.front(), parent.tokenizer);
  const double loss =
      validate(parent.model, parent.tokenizer, split, parent.config, at::kCPU).loss();
  EXPECT_NEAR(valid.front()["loss"].get<double>(), loss, 1e-6 * loss);
}

// Training weights that do not fit the model are one error naming the file, not a crash later.
TEST(EmaTraining, TrainingWeightsThatDoNotFitTheModelAreOneErrorNamingTheFile) {
  const auto dir = test::temp_dir("ema_damaged");
  test::train(ema_config(dir, 3));
  LoadedModel loaded = load_checkpoint(dir / "last.pt", at::kCPU);
  loaded.state.training_weights = training_weights(dir / "last.pt");
  const auto expect_refused = [&](const std::string& what) {
    const auto path = dir / "damaged.pt";
    save_checkpoint(path, loaded.config, loaded.model, loaded.tokenizer, loaded.state);
    try {
      training_weights(path);
      ADD_FAILURE() << what << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  loaded.state.training_weights.back() = at::zeros({2, 3});
  expect_refused("is [2, 3]");
  loaded.state.training_weights.pop_back();
  expect_refused("training weights for a model of");
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
