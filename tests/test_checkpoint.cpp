// train/checkpoint.cpp: atomic writes and clear errors.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/json_fields.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

// The training state's JSON comes from its fields() (core/json_fields.h): every field survives
// the round trip, NaN as null; a key an older checkpoint lacks keeps the field's default.
TEST(Checkpoint, StateJsonRoundTripsEveryFieldAndDefaultsMissingOnes) {
  TrainingState state;
  int64_t i = 0;
  state.fields([&](const char*, auto& value) { value = static_cast<decltype(value + 0)>(++i); });
  const auto json = fields_to_json(state);
  EXPECT_EQ(json.size(), 11u);
  const auto back = fields_from_json<TrainingState>(json);
  i = 0;
  TrainingState(back).fields([&](const char* key, auto& value) {
    EXPECT_EQ(value, static_cast<decltype(value + 0)>(++i)) << key;
  });
  TrainingState fresh;
  EXPECT_TRUE(fields_to_json(fresh)["best_metric"].is_null());
  EXPECT_TRUE(std::isnan(fields_from_json<TrainingState>(fields_to_json(fresh)).best_metric));
  const auto old = fields_from_json<TrainingState>({{"step", 7}, {"train_seconds", 1.5}});
  EXPECT_EQ(old.step, 7);
  EXPECT_EQ(old.world_size, 1);
  EXPECT_EQ(old.log_bytes, -1);
  EXPECT_EQ(old.epochs_done, -1.0);
}

TEST(Checkpoint, AFailedWriteLeavesThePreviousCheckpointLoadable) {
  const auto dir = test::temp_dir("atomic");
  Config config = test::tiny_config(dir / "run");
  config.train.max_steps = 3;
  train(config);
  const fs::path last = dir / "run" / "last.pt";
  const auto before = load_checkpoint(last, at::kCPU);
  // A crash mid-write leaves only a partial temporary file behind...
  std::ofstream(last.string() + ".tmp") << "partial garbage";
  EXPECT_EQ(load_checkpoint(last, at::kCPU).state.step, 3);
  // ...and a write that fails outright never touches the published file.
  fs::remove(last.string() + ".tmp");
  fs::create_directory(last.string() + ".tmp");  // the temporary file cannot be created
  LoadedModel loaded = load_checkpoint(last, at::kCPU);
  test::expect_error(
      [&] { save_checkpoint(last, loaded.config, loaded.model, loaded.tokenizer, {}); },
      "last.pt.tmp: cannot write checkpoint");
  const auto after = load_checkpoint(last, at::kCPU);
  EXPECT_EQ(after.state.step, before.state.step);
  EXPECT_TRUE(torch::equal(after.model->parameters()[0], before.model->parameters()[0]));
}

TEST(Checkpoint, CorruptOrMissingFilesAreClearErrors) {
  const auto dir = test::temp_dir("corrupt");
  std::ofstream(dir / "bad.pt") << "not a checkpoint";
  test::expect_error([&] { load_checkpoint(dir / "bad.pt", at::kCPU); }, "bad.pt: not a readable");
  test::expect_error([&] { load_checkpoint(dir / "none.pt", at::kCPU); },
                     "none.pt: checkpoint not found");
  test::expect_error([&] { load_checkpoint(dir, at::kCPU); }, "no averaged.pt, best.pt or last.pt");
}
}  // namespace
}  // namespace nmt
