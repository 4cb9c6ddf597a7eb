// train/schedule.cpp: learning-rate schedules and budget progress.
#include <cmath>

#include <gtest/gtest.h>

#include "core/config.h"
#include "train/schedule.h"

namespace nmt {
namespace {

TEST(Schedule, InverseSqrtWarmsUpLinearlyThenDecays) {
  TrainConfig t;
  t.lr = 1e-3;
  t.warmup.steps = 100;
  EXPECT_DOUBLE_EQ(learning_rate(t, 1), 1e-5);
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 100), 1e-3);        // peak at the end of warmup
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3 * 0.5);  // sqrt(100 / 400)
  t.schedule = Schedule::kConstant;
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3);
}

TEST(Schedule, LinearAndCosineWarmUpThenDecayToZeroAtTheBudget) {
  TrainConfig t;
  t.lr = 2e-3;
  t.warmup.steps = 100;
  for (const char* schedule : {"linear", "cosine"}) {
    t.schedule = require_choice<Schedule>("schedule", schedule);
    EXPECT_DOUBLE_EQ(learning_rate(t, 50, 0.0), 1e-3) << schedule;  // warmup ramp
    EXPECT_DOUBLE_EQ(learning_rate(t, 100, 0.0), 2e-3) << schedule;
    EXPECT_NEAR(learning_rate(t, 500, 0.5), 1e-3, 1e-12) << schedule;  // both halve at mid-budget
    EXPECT_NEAR(learning_rate(t, 900, 1.0), 0.0, 1e-12) << schedule;
    EXPECT_NEAR(learning_rate(t, 900, 1.5), 0.0, 1e-12) << schedule;  // progress is clamped
  }
  t.schedule = Schedule::kLinear;
  EXPECT_NEAR(learning_rate(t, 500, 0.25), 1.5e-3, 1e-12);
  t.schedule = Schedule::kCosine;
  EXPECT_NEAR(learning_rate(t, 500, 0.25), 1e-3 * (1.0 + std::sqrt(0.5)), 1e-12);
}

// A warmup given as a share of the budget ramps on the budget's progress: the same peak, reached
// at the same share of an 8-minute and of a 60-minute run, so a short budget is not spent
// warming up. Its steps are estimated from the rate so far.
TEST(Schedule, AWarmupShareFollowsTheBudget) {
  TrainConfig t;
  t.lr = 2e-3;
  t.schedule = Schedule::kLinear;
  t.warmup = Warmup{0, 10.0};
  EXPECT_DOUBLE_EQ(learning_rate(t, 7, 0.05), 2e-3 * 0.5 * 0.95);    // half-way up the ramp
  EXPECT_DOUBLE_EQ(learning_rate(t, 900, 0.05), 2e-3 * 0.5 * 0.95);  // whatever the step
  EXPECT_DOUBLE_EQ(learning_rate(t, 14, 0.1), 2e-3 * 0.9);           // the peak, then decay
  EXPECT_DOUBLE_EQ(learning_rate(t, 70, 0.5), 1e-3);
  t.schedule = Schedule::kInverseSqrt;
  EXPECT_DOUBLE_EQ(learning_rate(t, 5, 0.05), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(t, 10, 0.1), 2e-3);
  EXPECT_DOUBLE_EQ(learning_rate(t, 40, 0.4), 1e-3);  // sqrt(0.1 / 0.4), as steps 10 and 40
  EXPECT_DOUBLE_EQ(learning_rate(t, 1, 0.0), 0.0);
  // The same share is many steps in an hour and few in 8 minutes, at the same step rate.
  t.max_epochs = 0;
  t.max_minutes = 60;
  EXPECT_EQ(warmup_steps(t, 120, budget_progress(t, 120, 60.0, 0.0)), 720);
  t.max_minutes = 8;
  EXPECT_EQ(warmup_steps(t, 120, budget_progress(t, 120, 60.0, 0.0)), 96);
  t.warmup = Warmup{800, 0.0};
  EXPECT_EQ(warmup_steps(t, 120, 0.5), 800);
  EXPECT_EQ(describe_budget(t), "max_minutes 8");
  t.max_steps = 1000;
  EXPECT_EQ(describe_budget(t), "max_steps 1000, max_minutes 8");
}

TEST(Schedule, BudgetProgressIsTheNearestLimit) {
  TrainConfig t;
  t.max_epochs = 0;
  t.max_minutes = 10;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.25);
  t.max_steps = 200;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.5);  // the step limit comes first
  t.max_epochs = 4;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.75);
  EXPECT_DOUBLE_EQ(budget_progress(t, 400, 900.0, 9.0), 1.0);
}
}  // namespace
}  // namespace nmt
