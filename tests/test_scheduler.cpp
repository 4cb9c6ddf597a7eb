// train/scheduler.h and train/checkpoint_keeper.h: the Trainer's decisions on limits, validation
// and early stopping, and the order and rotation of its checkpoint writes.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"
#include "train/checkpoint_keeper.h"
#include "train/scheduler.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

TEST(Scheduler, LimitsNameTheOneReached) {
  TrainConfig config;
  config.max_steps = 10;
  config.max_minutes = 1.0;
  const Scheduler scheduler(config);
  TrainingState state;
  state.step = 9;
  state.train_seconds = 59.0;
  EXPECT_EQ(scheduler.limit_reached(state), "");
  state.step = 10;
  EXPECT_EQ(scheduler.limit_reached(state), "max_steps reached");
  state.step = 3;
  state.train_seconds = 60.0;
  EXPECT_EQ(scheduler.limit_reached(state), "max_minutes reached");
  config.max_epochs = 2;
  state.epoch = 1;
  EXPECT_FALSE(scheduler.epochs_done(state));
  state.epoch = 2;
  EXPECT_TRUE(scheduler.epochs_done(state));
  config.max_epochs = 0;  // the Scheduler reads the Trainer's config as it is now
  EXPECT_FALSE(scheduler.epochs_done(state));
}

TEST(Scheduler, ValidatesEveryNStepsOrAtEpochEnds) {
  TrainConfig config;
  config.validate_every = 0;
  const Scheduler scheduler(config);
  EXPECT_TRUE(scheduler.validates_at_epoch_end());
  EXPECT_FALSE(scheduler.validates_after_step(100));
  EXPECT_EQ(scheduler.validation_interval(/*epoch_batches=*/10, /*batches_per_step=*/4), 3);
  config.validate_every = 50;
  EXPECT_FALSE(scheduler.validates_at_epoch_end());
  EXPECT_TRUE(scheduler.validates_after_step(100));
  EXPECT_FALSE(scheduler.validates_after_step(101));
  EXPECT_EQ(scheduler.validation_interval(10, 4), 50);
}

// BLEU must rise (loss fall) to count as best; patience counts validations since the best.
TEST(Scheduler, JudgeKeepsTheBestAndStopsWhenPatienceRunsOut) {
  TrainConfig config;
  config.metric = Metric::kBleu;
  config.patience = 2;
  const Scheduler scheduler(config);
  TrainingState state;
  state.step = 100;
  EXPECT_TRUE(scheduler.judge(30.0, state).best);
  EXPECT_EQ(state.best_step, 100);
  state.step = 200;
  auto verdict = scheduler.judge(29.0, state);
  EXPECT_FALSE(verdict.best);
  EXPECT_EQ(verdict.stop_reason, "");
  EXPECT_EQ(state.bad_validations, 1);
  state.step = 300;
  verdict = scheduler.judge(30.0, state);  // equal is no improvement
  EXPECT_EQ(verdict.stop_reason, "early stopping: no bleu improvement in 2 validations");
  EXPECT_DOUBLE_EQ(state.best_metric, 30.0);
  EXPECT_EQ(state.best_step, 100);
  state.step = 400;
  EXPECT_TRUE(scheduler.judge(31.0, state).best);
  EXPECT_EQ(state.bad_validations, 0);
  config.patience = 0;  // off
  for (int i = 0; i < 5; ++i) EXPECT_EQ(scheduler.judge(1.0, state).stop_reason, "");
}

// step_N.pt, then last.pt (the commit point), then best.pt; rotation keeps the newest N and
// replaces a step checkpoint only a few steps older than final weights.
TEST(CheckpointKeeper, WritesInCommitOrderAndKeepsTheNewest) {
  const auto dir = test::temp_dir("keeper");
  std::vector<std::string> writes;
  CheckpointKeeper keeper(dir, 2, [&](const fs::path& path, bool with_optimizer) {
    writes.push_back(path.filename().string() + (with_optimizer ? "+opt" : ""));
    std::ofstream(path) << "x";
  });
  keeper.after_validation(100, /*best=*/true, 0);
  EXPECT_EQ(writes, (std::vector<std::string>{"step_100.pt", "last.pt+opt", "best.pt"}));
  writes.clear();
  keeper.after_validation(200, false, 0);
  EXPECT_EQ(writes, (std::vector<std::string>{"step_200.pt", "last.pt+opt"}));
  keeper.after_validation(300, false, 0);
  EXPECT_FALSE(fs::exists(dir / "step_100.pt"));
  EXPECT_TRUE(fs::exists(dir / "step_200.pt"));
  EXPECT_TRUE(fs::exists(dir / "step_300.pt"));
  keeper.after_validation(305, false, /*replace_within=*/10);  // final weights 5 steps on
  EXPECT_FALSE(fs::exists(dir / "step_300.pt"));
  EXPECT_TRUE(fs::exists(dir / "step_200.pt"));
  EXPECT_TRUE(fs::exists(dir / "step_305.pt"));
  EXPECT_TRUE(fs::exists(dir / "best.pt"));
}

TEST(CheckpointKeeper, KeepingNoneWritesNoStepCheckpoints) {
  const auto dir = test::temp_dir("keeper_none");
  std::vector<std::string> writes;
  CheckpointKeeper keeper(
      dir, 0, [&](const fs::path& path, bool) { writes.push_back(path.filename().string()); });
  keeper.after_validation(100, true, 0);
  EXPECT_EQ(writes, (std::vector<std::string>{"last.pt", "best.pt"}));
}

}  // namespace
}  // namespace nmt
