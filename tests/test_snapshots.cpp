// train/snapshots.h: the final average follows the run's budget (train.average_snapshots,
// train.average_window), never a count of step checkpoints.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "train/checkpoint.h"
#include "train/snapshots.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// The steps of the snapshot files in `run_dir`, in order.
std::vector<int64_t> snapshot_steps(const fs::path& run_dir) {
  std::vector<int64_t> steps;
  const TrainConfig config;  // outlives the plan, which keeps a reference
  const SnapshotPlan plan(run_dir, config);
  for (const auto& file : plan.files()) steps.push_back(read_checkpoint_state(file).step);
  return steps;
}

/// step_config with the final average on: `snapshots` over the last `fraction` of `steps`.
Config averaging_config(const fs::path& dir, int64_t steps, int64_t snapshots, double fraction) {
  Config config = test::step_config(dir, steps);
  config.train.average_snapshots = snapshots;
  config.train.average_window = fraction;
  return config;
}

TrainConfig window(int64_t snapshots, double fraction) {
  TrainConfig config;
  config.average_snapshots = snapshots;
  config.average_window = fraction;
  return config;
}

TEST(SnapshotPlan, DuePointsAreEvenlySpacedOverTheWindowUpToTheEnd) {
  const TrainConfig config = window(4, 0.5);
  const SnapshotPlan plan(test::temp_dir("snap_due"), config);
  EXPECT_DOUBLE_EQ(plan.due_at(1), 0.625);
  EXPECT_DOUBLE_EQ(plan.due_at(2), 0.75);
  EXPECT_DOUBLE_EQ(plan.due_at(3), 0.875);
  EXPECT_DOUBLE_EQ(plan.due_at(4), 1.0);
}

// Nothing before the window; one snapshot per step, even where one step passes two points.
TEST(SnapshotPlan, TakesEachPointOnceAndNothingBeforeTheWindow) {
  const TrainConfig config = window(4, 0.5);
  SnapshotPlan plan(test::temp_dir("snap_take"), config);
  EXPECT_EQ(plan.start(0, 0.0), "");
  std::vector<double> taken;
  for (double p : {0.1, 0.3, 0.6, 0.624, 0.63, 0.7, 0.8, 0.95, 0.99, 1.0, 1.0}) {
    if (plan.take(p)) taken.push_back(p);
  }
  EXPECT_EQ(taken, (std::vector<double>{0.63, 0.8, 0.95, 1.0}));
  SnapshotPlan jumpy(test::temp_dir("snap_jump"), config);
  jumpy.start(0, 0.0);
  EXPECT_TRUE(jumpy.take(0.8));  // points 1 and 2: one snapshot
  EXPECT_FALSE(jumpy.take(0.85));
  EXPECT_TRUE(jumpy.take(0.9));
  EXPECT_TRUE(jumpy.take(1.0));
  const TrainConfig none = window(0, 0.5);  // outlives the plan, which keeps a reference
  SnapshotPlan off(test::temp_dir("snap_off"), none);
  off.start(0, 0.0);
  EXPECT_FALSE(off.take(1.0));
}

TEST(SnapshotPlan, AResumeGoesOnFromThePointsAlreadyPassed) {
  const TrainConfig config = window(4, 0.5);
  SnapshotPlan plan(test::temp_dir("snap_resume"), config);
  plan.start(30, 0.76);  // points 1 and 2 were taken before the resume
  EXPECT_FALSE(plan.take(0.8));
  EXPECT_TRUE(plan.take(0.875));  // point 3
}

// A run whose budget is steps: 40 steps, 4 snapshots over the last half: steps 25, 30, 35, 40,
// and averaged.pt is their mean, validated and logged.
TEST(SnapshotAverage, TheRunEndsWithTheMeanOfItsWindow) {
  const auto dir = test::temp_dir("snap_run");
  Config config = averaging_config(dir, 40, 4, 0.5);
  test::train(config);
  EXPECT_EQ(snapshot_steps(dir), (std::vector<int64_t>{25, 30, 35, 40}));
  const LoadedModel averaged = load_checkpoint(dir / "averaged.pt", at::kCPU);
  EXPECT_EQ(averaged.state.step, 40);
  std::vector<LoadedModel> snapshots;
  for (int64_t step : {25, 30, 35, 40}) {
    snapshots.push_back(
        load_checkpoint(dir / ("snapshot_" + std::to_string(step) + ".pt"), at::kCPU));
  }
  for (const auto& item : averaged.model->named_parameters()) {
    at::Tensor sum = at::zeros_like(item.value(), at::kDouble);
    for (const auto& s : snapshots) sum += s.model->named_parameters()[item.key()].to(at::kDouble);
    EXPECT_TRUE(torch::allclose(item.value().to(at::kDouble), sum / 4.0, 1e-6, 1e-7)) << item.key();
  }
  // The final weights differ from the mean: the average is not just last.pt again.
  const LoadedModel last = load_checkpoint(dir / "last.pt", at::kCPU);
  EXPECT_FALSE(
      torch::equal(last.model->named_parameters()["encoder.embeddings.tokens.weight"],
                   averaged.model->named_parameters()["encoder.embeddings.tokens.weight"]));
  EXPECT_EQ(test::series(dir, "averaged", "snapshots"), (std::vector<double>{4.0}));
}

// A short run never averages early weights in: 4 steps with 8 snapshots over the last 30% take
// the weights at step 3 (75% of the budget) and 4, nothing earlier.
TEST(SnapshotAverage, AShortRunAveragesOnlyItsEnd) {
  const auto dir = test::temp_dir("snap_short");
  Config config = averaging_config(dir, 4, 8, 0.3);
  test::train(config);
  EXPECT_EQ(snapshot_steps(dir), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(fs::exists(dir / "averaged.pt"));
}

// A window too wide for the run (a tiny model still learning fast over its last 90%) averages in
// weak weights: the record and the log say the final weights validate better, with both losses.
TEST(SnapshotAverage, AnAverageWorseThanTheFinalWeightsIsSaid) {
  const auto dir = test::temp_dir("snap_worse");
  Config config = averaging_config(dir, 12, 4, 0.9);
  test::train(config);
  const auto averaged = test::records(dir, "averaged");
  ASSERT_EQ(averaged.size(), 1u);
  const auto valids = test::records(dir, "valid");
  EXPECT_GT(averaged[0]["loss"].get<double>(), valids.back()["loss"].get<double>());
  EXPECT_EQ(averaged[0]["better_than_final"], false);
  EXPECT_NE(test::read_text(dir / "train.log")
                .find("averaging: the average validates worse than the final weights (loss "),
            std::string::npos);
}

// A resume that raises the limit moves the window: the snapshots that now lie before it go,
// the ones inside it stay, and the points still ahead are taken.
TEST(SnapshotAverage, ARaisedLimitMovesTheWindow) {
  const auto dir = test::temp_dir("snap_halves");
  Config config = averaging_config(dir, 40, 4, 0.5);
  // 30 steps (snapshots 19, 23, 27, 30), then resumed to 40: 19 and 23 lie before the window.
  test::train_stopped_and_resumed(config, 30);
  EXPECT_EQ(snapshot_steps(dir), (std::vector<int64_t>{27, 30, 35, 40}));
  config.train.max_steps = 80;  // window now steps 41..80: every old snapshot goes
  test::train(config, /*resume=*/true);
  EXPECT_EQ(snapshot_steps(dir), (std::vector<int64_t>{50, 60, 70, 80}));
  EXPECT_EQ(load_checkpoint(dir / "averaged.pt", at::kCPU).state.step, 80);
}

// A crash at a snapshot loses none: the snapshot is written before the step's last.pt, so the
// resume starts before it and takes it again. Here the crash is a write that fails (the snapshot's
// name is taken by a directory) at step 30, which is also a validation step.
TEST(SnapshotAverage, ACrashWritingASnapshotLosesNoneOfTheAverage) {
  const auto dir = test::temp_dir("snap_crash");
  Config whole = averaging_config(dir / "whole", 40, 4, 0.5);
  whole.train.validate_every = 5;
  test::train(whole);
  Config crashed = whole;
  crashed.train.run_dir = (dir / "crashed").string();
  fs::create_directories(dir / "crashed" / "snapshot_30.pt" / "taken");
  EXPECT_THROW(test::train(crashed), Error);
  EXPECT_LT(read_checkpoint_state(dir / "crashed" / "last.pt").step, 30);
  fs::remove_all(dir / "crashed" / "snapshot_30.pt");
  test::train(crashed, /*resume=*/true);
  EXPECT_EQ(snapshot_steps(dir / "crashed"), snapshot_steps(dir / "whole"));
  const LoadedModel a = load_checkpoint(dir / "whole" / "averaged.pt", at::kCPU);
  const LoadedModel b = load_checkpoint(dir / "crashed" / "averaged.pt", at::kCPU);
  for (const auto& item : a.model->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), b.model->named_parameters()[item.key()])) << item.key();
  }
}

// An epoch budget: snapshots taken partway through an epoch stay through a resume (it places
// them by the epochs done when they were taken, not by the whole epochs).
TEST(SnapshotAverage, AResumeKeepsMidEpochSnapshotsOfAnEpochBudget) {
  const auto dir = test::temp_dir("snap_epochs");
  Config config = test::tiny_config(dir);
  config.train.max_epochs = 2;
  config.train.average_snapshots = 4;
  config.train.average_window = 0.25;
  test::train(config);
  const auto taken = snapshot_steps(dir);
  ASSERT_EQ(taken.size(), 4u);
  test::train(config, /*resume=*/true);  // nothing left to train: only the start-up's tidying
  EXPECT_EQ(snapshot_steps(dir), taken);
}

// A run that ended with its average, resumed with a raised limit, trains as if never stopped:
// building the averaged model draws no numbers the dropout masks would (the generator's state
// in last.pt is the training's). The schedule here does not follow the limit.
TEST(SnapshotAverage, AResumeAfterTheAverageTrainsAsIfNeverStopped) {
  const auto dir = test::temp_dir("snap_after");
  Config whole = averaging_config(dir / "whole", 12, 1, 0.1);
  whole.train.validate_every = 5;
  test::expect_resume_reproduces(whole, dir / "halves", 7);
  EXPECT_TRUE(fs::exists(dir / "halves" / "averaged.pt"));
}

TEST(SnapshotAverage, NoneWhenTurnedOff) {
  const auto dir = test::temp_dir("snap_none");
  Config config = test::step_config(dir, 6);
  config.train.average_snapshots = 0;
  test::train(config);
  EXPECT_TRUE(snapshot_steps(dir).empty());
  EXPECT_FALSE(fs::exists(dir / "averaged.pt"));
}

}  // namespace
}  // namespace nmt
