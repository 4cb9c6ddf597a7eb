// cli/cmd_translate.cpp: nmt translate end to end through the real binary.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cli_test_util.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(CmdTranslate, StdinKeepsLineOrderAndReportsBadLines) {
  const auto dir = test::temp_dir("translate_cli");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string(),
                           "a dog .\n\nbad \xfe\na man .\n", dir);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("line 3"), std::string::npos) << run.err;
  Translator translator(model, test::fixture_tokenizer(), test::fixture_config().decode, at::kCPU);
  const auto expected = translator.translate({"a dog .", "", "a man ."});
  EXPECT_EQ(run.out, expected[0].best() + "\n\n\n" + expected[2].best() + "\n");
}

TEST(CmdTranslate, MissingCheckpointIsOneClearLine) {
  const auto dir = test::temp_dir("translate_cli_missing");
  const auto run =
      run_nmt("translate --checkpoint " + (dir / "nope.pt").string() + " hello", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: " + (dir / "nope.pt").string() + ": checkpoint not found\n");
}

TEST(CmdTranslate, BadDeviceIsOneLineNamingIt) {
  const auto dir = test::temp_dir("translate_cli_device");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run =
      run_nmt("translate --device tpu --checkpoint " + (dir / "m.pt").string(), "a dog .\n", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: device 'tpu' is not valid: use auto, cpu, cuda or cuda:N\n");
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace nmt
