// cli/cmd_train.cpp: nmt train end to end through the real binary.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(CmdTrain, SigintFinishesTheStepSavesAndExplainsHowToResume) {
  const auto dir = test::temp_dir("sigint");
  Config config = test::tiny_config(dir / "run");
  config.train.max_epochs = 1000;
  save_config(config, dir / "config.json");
  const pid_t pid = spawn_nmt({"train", "--config", (dir / "config.json").string()}, dir / "log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (train_losses(dir / "run").size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130);
  const std::string output = read_text(dir / "log");
  EXPECT_NE(output.find("resume with: nmt train --resume"), std::string::npos) << output;
  const int64_t stopped_at = load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step;
  EXPECT_GE(stopped_at, 3);
  // The printed command works as printed (RUN_DIR as a separate argument) and continues there.
  const pid_t resumed = spawn_nmt({"train", "--resume", (dir / "run").string(), "--set",
                                   "train.max_steps=" + std::to_string(stopped_at + 2)},
                                  dir / "resume_log");
  EXPECT_EQ(wait_exit_code(resumed), 0) << read_text(dir / "resume_log");
  EXPECT_EQ(load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step, stopped_at + 2);
}

// A process past train.max_memory_gb (here 10 MB: less than any process holds) stops at its first
// log point with one error naming the key and the numbers, saved as an interrupted run is, and a
// resume with room to spare goes on from there.
TEST(CmdTrain, PastMaxMemoryStopsSavedWithOneErrorAndResumes) {
  const auto dir = test::temp_dir("max_memory");
  Config config = test::tiny_config(dir / "run");
  config.train.max_epochs = 0;
  config.train.max_steps = 40;  // never reached: the first log point stops it
  config.train.log_every = 2;
  config.train.validate_every = 2;  // due at the stop, and skipped: decoding would add to it
  config.train.max_memory_gb = 0.01;
  save_config(config, dir / "config.json");
  const pid_t pid = spawn_nmt({"train", "--config", (dir / "config.json").string()}, dir / "log");
  EXPECT_EQ(wait_exit_code(pid), 2);
  const std::string output = read_text(dir / "log");
  EXPECT_NE(output.find("stopped: at step 2 the process holds"), std::string::npos) << output;
  EXPECT_NE(output.find("error: training stopped past train.max_memory_gb"), std::string::npos)
      << output;
  EXPECT_NE(output.find("past train.max_memory_gb (0.01 GB)"), std::string::npos) << output;
  EXPECT_NE(output.find("resume with: nmt train --resume"), std::string::npos) << output;
  EXPECT_EQ(load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step, 2);
  EXPECT_EQ(read_text(dir / "run" / "metrics.jsonl").find("\"valid\""), std::string::npos);
  const pid_t resumed = spawn_nmt({"train", "--resume", (dir / "run").string(), "--set",
                                   "train.max_memory_gb=0", "--set", "train.max_steps=4"},
                                  dir / "resume_log");
  EXPECT_EQ(wait_exit_code(resumed), 0) << read_text(dir / "resume_log");
  EXPECT_EQ(load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step, 4);
}

TEST(CmdTrain, PrintConfigShowsTheResolvedConfigAndTrainsNothing) {
  const auto dir = test::temp_dir("print_config");
  Config config = test::tiny_config(dir / "run");
  save_config(config, dir / "config.json");
  const auto printed = [&](const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> all = {"train"};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--print-config");
    const pid_t pid = spawn_nmt(all, dir / log);
    EXPECT_EQ(wait_exit_code(pid), 0) << read_text(dir / log);
    return nlohmann::json::parse(read_text(dir / log));
  };
  const std::string file = (dir / "config.json").string();
  // --set applies in order (the last one wins); an empty run_dir resolves to checkpoints/NAME.
  const auto named =
      printed({"--config", file, "--set", "train.name=first", "--set", "train.run_dir=", "--set",
               "train.name=print_config_probe", "--set", "decode.beam=3"},
              "named");
  EXPECT_EQ(named["train"]["run_dir"], "checkpoints/print_config_probe");
  EXPECT_EQ(named["decode"]["beam"], 3);
  EXPECT_EQ(named["model"]["d_model"], config.model.d_model);
  EXPECT_FALSE(fs::exists("checkpoints/print_config_probe"));
  EXPECT_FALSE(fs::exists(dir / "run"));
  // Several --config files lay over each other in order, --set over them all.
  std::ofstream(dir / "mine.json") << R"({"model": {"d_ff": 48}, "decode": {"beam": 2}})";
  const auto layered = printed(
      {"--config", file, "--config", (dir / "mine.json").string(), "--set", "decode.beam=4"},
      "layered");
  EXPECT_EQ(layered["model"]["d_ff"], 48);
  EXPECT_EQ(layered["model"]["d_model"], config.model.d_model);
  EXPECT_EQ(layered["decode"]["beam"], 4);
  // A resumed run prints its own config.json, run_dir = the directory given.
  const pid_t trained =
      spawn_nmt({"train", "--config", file, "--set", "train.max_steps=1"}, dir / "train_log");
  ASSERT_EQ(wait_exit_code(trained), 0) << read_text(dir / "train_log");
  const auto resumed =
      printed({"--resume", (dir / "run").string(), "--set", "train.max_steps=5"}, "resumed");
  EXPECT_EQ(resumed["train"]["run_dir"], (dir / "run").string());
  EXPECT_EQ(resumed["train"]["max_steps"], 5);
  EXPECT_EQ(load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step, 1);
  // Bad input is the usual one-line error and a non-zero exit.
  const pid_t bad = spawn_nmt({"train", "--config", file, "--set", "train.name=", "--set",
                               "train.run_dir=", "--print-config"},
                              dir / "bad_log");
  EXPECT_EQ(wait_exit_code(bad), 2);
  EXPECT_NE(read_text(dir / "bad_log").find("train.name"), std::string::npos)
      << read_text(dir / "bad_log");
}

TEST(CmdTrain, Bf16TrainingOnCpuRunsWithSpinningOpenMpThreads) {
  // nmt chooses the policy only when the user has not; clear the variables it would respect
  // (test_environment.cpp sets OMP_WAIT_POLICY for the other tests' children: put it back after).
  struct Restore {
    std::vector<std::pair<std::string, std::string>> saved;
    ~Restore() {
      for (const auto& [name, value] : saved) setenv(name.c_str(), value.c_str(), 1);
    }
  } restore;
  for (const char* name : {"OMP_WAIT_POLICY", "NMT_NO_REEXEC", "NMT_CHOSEN_WAIT_POLICY"}) {
    if (const char* value = std::getenv(name)) restore.saved.emplace_back(name, value);
    unsetenv(name);
  }
  for (const std::string precision : {"bf16", "fp32"}) {
    const auto dir = test::temp_dir("wait_policy_" + precision);
    Config config = test::tiny_config(dir / "run");
    config.train.precision = require_choice<Precision>("precision", precision);
    config.train.max_steps = 1;
    save_config(config, dir / "config.json");
    const pid_t pid = spawn_nmt({"train", "--config", (dir / "config.json").string()}, dir / "log");
    EXPECT_EQ(wait_exit_code(pid), 0) << read_text(dir / "log");
    const std::string expected = precision == "bf16" ? "ACTIVE" : "PASSIVE";
    EXPECT_NE(read_text(dir / "run" / "train.log").find("OMP_WAIT_POLICY=" + expected),
              std::string::npos)
        << precision << ": " << read_text(dir / "run" / "train.log");
  }
}
}  // namespace
}  // namespace nmt
