// cli/main.cpp, cli/common.cpp: argument and config errors common to every subcommand.
#include <string>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(Cli, StrayArgumentIsAnError) {
  const auto dir = test::temp_dir("cli_stray");
  const pid_t pid = spawn_nmt({"train", "--config", "x.json", "extra"}, dir / "log");
  EXPECT_EQ(wait_exit_code(pid), 2);
  EXPECT_EQ(read_text(dir / "log"), "error: unexpected argument 'extra' (see nmt train --help)\n");
}

TEST(Cli, BadConfigValueIsOneLineNamingTheKey) {
  const auto dir = test::temp_dir("cli_config");
  const pid_t pid = spawn_nmt({"train", "--set", "model.dropout=2"}, dir / "log");
  EXPECT_EQ(wait_exit_code(pid), 2);
  const std::string output = read_text(dir / "log");
  EXPECT_EQ(output, "error: model.dropout = 2 is out of range: must be in [0, 0.99]\n");
}

TEST(Cli, UnknownCommandAndBadDeviceNameTheCulprit) {
  const auto dir = test::temp_dir("cli_unknown");
  const auto unknown = run_nmt("trian --config x.json", "", dir);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err, "error: unknown command 'trian' (run nmt --help for the list)\n");
  const auto device = run_nmt("train --set train.device=tpu --print-config", "", dir);
  EXPECT_EQ(device.code, 2);
  EXPECT_EQ(device.err,
            "error: train.device = 'tpu' is not valid: use auto, cpu, cuda or cuda:N\n");
  const auto listed = run_nmt("--help", "", dir);
  EXPECT_EQ(listed.code, 0);
  for (const char* command : {"prepare", "train", "translate", "evaluate", "average", "bench"}) {
    EXPECT_NE(listed.out.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace nmt
