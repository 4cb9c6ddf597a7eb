// cli/cmd_prepare.cpp: nmt prepare end to end through the real binary.
#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "core/config.h"
#include "test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

// The first run trains the tokenizer into the run directory and prints the corpus statistics;
// the second loads it from there.
TEST(CmdPrepare, TrainsTheTokenizerOnceAndPrintsCorpusStatistics) {
  const auto dir = test::temp_dir("prepare_cli");
  Config config = tiny_config(dir / "run");
  save_config(config, dir / "config.json");
  const std::string prepare = "prepare --config " + (dir / "config.json").string();
  const auto first = run_nmt(prepare, "", dir);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("tokenizer: trained unigram joint model in " + (dir / "run").string() +
                           ": vocab 150 (source), 150 (target)"),
            std::string::npos)
      << first.out;
  EXPECT_TRUE(fs::exists(dir / "run" / "spm.model"));
  EXPECT_NE(first.out.find("tiny (en->de)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("epoch 1 batches (data.batch_tokens=400)"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("sorted batches (data.batch_tokens=400)"), std::string::npos)
      << first.out;
  const auto second = run_nmt(prepare, "", dir);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("tokenizer: loaded joint model"), std::string::npos) << second.out;
}

TEST(CmdPrepare, MissingSplitIsOneLineNamingIt) {
  const auto dir = test::temp_dir("prepare_cli_missing");
  Config config = tiny_config(dir / "run");
  config.data.train = {CorpusSpec::of_split("nope")};
  save_config(config, dir / "config.json");
  const auto run = run_nmt("prepare --config " + (dir / "config.json").string(), "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("no file for split 'nope'"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

}  // namespace
}  // namespace nmt
