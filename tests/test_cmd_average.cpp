// cli/cmd_average.cpp: nmt average end to end through the real binary.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cli_test_util.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

// The written checkpoint holds the element-wise mean of the inputs' weights and the last one's
// training state.
TEST(CmdAverage, WritesTheMeanOfTheCheckpoints) {
  const auto dir = test::temp_dir("average_cli");
  auto a = fixture_model(1), b = fixture_model(2), c = fixture_model(3);
  TrainingState late;
  late.step = 300;
  save_checkpoint(dir / "a.pt", fixture_config(), a, fixture_tokenizer(), {});
  save_checkpoint(dir / "b.pt", fixture_config(), b, fixture_tokenizer(), {});
  save_checkpoint(dir / "c.pt", fixture_config(), c, fixture_tokenizer(), late);
  const auto run =
      run_nmt("average --output " + (dir / "avg.pt").string() + " " + (dir / "a.pt").string() +
                  " " + (dir / "b.pt").string() + " " + (dir / "c.pt").string(),
              "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("averaged 3 checkpoints into"), std::string::npos) << run.out;
  const auto averaged = load_checkpoint(dir / "avg.pt", at::kCPU);
  EXPECT_EQ(averaged.state.step, 300);
  const auto pa = a->named_parameters(), pb = b->named_parameters(), pc = c->named_parameters();
  for (const auto& item : averaged.model->named_parameters()) {
    const auto mean = (pa[item.key()] + pb[item.key()] + pc[item.key()]) / 3;
    EXPECT_TRUE(torch::allclose(item.value(), mean, 1e-6, 1e-7)) << item.key();
    if (!torch::equal(pa[item.key()], pb[item.key()])) {  // not a layer norm's initial ones
      EXPECT_FALSE(torch::equal(item.value(), pa[item.key()])) << item.key();
    }
  }
}

TEST(CmdAverage, OneCheckpointIsAnError) {
  const auto dir = test::temp_dir("average_cli_one");
  auto a = fixture_model(1);
  save_checkpoint(dir / "a.pt", fixture_config(), a, fixture_tokenizer(), {});
  const auto run = run_nmt(
      "average --output " + (dir / "avg.pt").string() + " " + (dir / "a.pt").string(), "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: averaging needs at least two checkpoints, got one\n");
  EXPECT_FALSE(fs::exists(dir / "avg.pt"));
}

}  // namespace
}  // namespace nmt
