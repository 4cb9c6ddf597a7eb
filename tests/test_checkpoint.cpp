// train/checkpoint.cpp: atomic writes and clear errors.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "test_util.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

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
