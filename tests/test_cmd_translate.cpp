// cli/cmd_translate.cpp: nmt translate end to end through the real binary.
#include <algorithm>
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

TEST(CmdTranslate, AttentionHeadOutOfRangeIsOneErrorBeforeTranslating) {
  const auto dir = test::temp_dir("translate_cli_head");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto heads = test::fixture_config().model.n_heads;
  const auto run =
      run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string() + " --attention " +
                  (dir / "a.svg").string() + " --head -2 \"a dog .\"",
              "", dir);
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_EQ(run.err, "error: attention head -2 is out of range: the model has " +
                         std::to_string(heads) + " heads (valid: -1.." + std::to_string(heads - 1) +
                         "; -1 = the mean over heads)\n");
  EXPECT_EQ(run.out, "");  // nothing translated
  EXPECT_FALSE(fs::exists(dir / "a.svg"));
}

TEST(CmdTranslate, SamplingNbestDoesNotWidenTheUnusedBeam) {
  // The beam rule (DecodeConfig::widen_beam_to_candidates) is the server's too: sampling keeps
  // the beam, so an n-best list of 1001 samples is not refused for a beam above 1000.
  const auto dir = test::temp_dir("translate_cli_sample_nbest");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string() +
                               " --sample 1001 --nbest 1001 \"a dog .\"",
                           "", dir);
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1001);
}

TEST(CmdTranslate, EarlyStoppingFlagReachesTheSearchAndABadValueNamesIt) {
  const auto dir = test::temp_dir("translate_cli_early_stopping");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const std::string translate =
      "translate --device cpu --beam 4 --length-penalty 2 --checkpoint " + (dir / "m.pt").string();
  auto config = test::fixture_config().decode;
  config.beam = 4;
  config.length_penalty = 2.0;
  for (const char* flag : {" --early-stopping", " --early-stopping=false"}) {
    config.early_stopping = std::string(flag) == " --early-stopping";
    const auto run = run_nmt(translate + flag, "a dog .\na man .\n", dir);
    EXPECT_EQ(run.code, 0) << run.err;
    Translator translator(model, test::fixture_tokenizer(), config, at::kCPU);
    const auto expected = translator.translate({"a dog .", "a man ."});
    EXPECT_EQ(run.out, expected[0].best() + "\n" + expected[1].best() + "\n") << flag;
  }
  const auto bad = run_nmt(translate + " --early-stopping=yes", "a dog .\n", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: --early-stopping = 'yes' is not valid: use --early-stopping (true), "
            "--early-stopping=true or --early-stopping=false\n");
}

}  // namespace
}  // namespace nmt
