// Fault tolerance of training (docs/fault_tolerance.md): resume leaves one history, checkpoint
// writes are durable and fail cleanly, one writer per run directory, and the fault campaign.
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/run_lock.h"
#include "spawn_util.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/optimizer.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// tiny_config stopping at `steps`, validating and checkpointing every 5 steps.
Config run_config(const fs::path& run_dir, int64_t steps, int64_t keep = 3) {
  Config config = test::tiny_config(run_dir);
  config.train.max_epochs = 0;
  config.train.max_steps = steps;
  config.train.validate_every = 5;
  config.train.keep_checkpoints = keep;
  return config;
}

std::vector<std::pair<std::string, int64_t>> metric_keys(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  std::vector<std::pair<std::string, int64_t>> keys;
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line);
    keys.emplace_back(record.at("kind").get<std::string>(), record.at("step").get<int64_t>());
  }
  return keys;
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tmp") names.push_back(entry.path().filename().string());
  }
  return names;
}

bool same_weights(const fs::path& a, const fs::path& b) {
  const auto x = load_checkpoint(a, at::kCPU), y = load_checkpoint(b, at::kCPU);
  const auto p = x.model->parameters(), q = y.model->parameters();
  for (size_t i = 0; i < p.size(); ++i) {
    if (!torch::equal(p[i], q[i])) return false;
  }
  return !p.empty();
}

TEST(Resume, CutsTheLogsBackAndRemovesWhatLiesBeyondTheCheckpoint) {
  const auto dir = test::temp_dir("resume_cut");
  const fs::path run = dir / "run";
  test::train(run_config(run, 10));
  // What a process killed after step 10's checkpoint leaves behind: records and lines of steps
  // 11-15, a half-written best.pt, and step_15.pt written just before last.pt would have been.
  std::ofstream(run / "metrics.jsonl", std::ios::app) << R"({"kind":"train","step":11,"loss":1})"
                                                      << "\n"
                                                      << R"({"kind":"valid","step":15,"loss":1})"
                                                      << "\n";
  std::ofstream(run / "train.log", std::ios::app) << "2026-01-01 00:00:00  step 11 | lost\n";
  std::ofstream(run / "best.pt.tmp") << "partial";
  fs::copy_file(run / "step_10.pt", run / "step_15.pt");
  test::train(run_config(run, 12), /*resume=*/true);

  const auto keys = metric_keys(run);
  const std::set<std::pair<std::string, int64_t>> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size()) << "a step has two records";
  int64_t train_records = 0;
  for (const auto& [kind, step] : keys) train_records += kind == "train" ? 1 : 0;
  EXPECT_EQ(train_records, 12);
  EXPECT_TRUE(temporaries(run).empty());
  EXPECT_FALSE(fs::exists(run / "step_15.pt"));
  EXPECT_TRUE(fs::exists(run / "step_10.pt"));
  const std::string log = test::slurp(run / "train.log");
  EXPECT_EQ(log.find("step 11 | lost"), std::string::npos);
  EXPECT_NE(log.find("resume: found last.pt (step 10), step_10.pt, step_5.pt, best.pt (step "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("resume: discarded best.pt.tmp (stale temporary file), step_15.pt (beyond "
                     "the checkpoint), metrics.jsonl: 2 records written after the checkpoint, "
                     "train.log: 1 lines written after the checkpoint"),
            std::string::npos)
      << log;
}

TEST(Resume, AKillBetweenLastPtAndBestPtIsRepairedFromLastPt) {
  const auto dir = test::temp_dir("resume_best");
  const fs::path run = dir / "run";
  test::train(run_config(run, 5, /*keep=*/0));
  fs::copy_file(run / "best.pt", dir / "best_5.pt");
  test::train(run_config(run, 10, 0), true);
  ASSERT_EQ(read_checkpoint_state(run / "best.pt").step, 10);  // the loss still falls
  // Killed after last.pt (step 10, which records the best at step 10) but before best.pt.
  fs::copy_file(dir / "best_5.pt", run / "best.pt", fs::copy_options::overwrite_existing);
  test::train(run_config(run, 10, 0), true);
  EXPECT_EQ(read_checkpoint_state(run / "best.pt").step, 10);
  EXPECT_TRUE(same_weights(run / "best.pt", run / "last.pt"));
  EXPECT_NE(test::slurp(run / "train.log").find("best.pt rewritten from last.pt (step 10)"),
            std::string::npos);
}

TEST(Resume, ACheckpointWithoutLogSizesDropsTheMetricsRecordsOfLaterSteps) {
  const auto dir = test::temp_dir("resume_old");
  const fs::path run = dir / "run";
  test::train(run_config(run, 5));
  {  // last.pt as nmt wrote it before checkpoints recorded the logs' sizes
    LoadedModel loaded = load_checkpoint(run / "last.pt", at::kCPU);
    auto optimizer = make_optimizer(loaded.model->named_parameters(), loaded.config.train);
    load_optimizer_state(run / "last.pt", *optimizer);
    loaded.state.log_bytes = loaded.state.metrics_bytes = -1;
    save_checkpoint(run / "last.pt", loaded.config, loaded.model, loaded.tokenizer, loaded.state,
                    optimizer.get());
  }
  std::ofstream(run / "metrics.jsonl", std::ios::app) << R"({"kind":"train","step":6,"loss":1})"
                                                      << "\n";
  test::train(run_config(run, 7), true);
  const auto keys = metric_keys(run);
  const std::set<std::pair<std::string, int64_t>> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  EXPECT_EQ(keys.size(), 9u);  // train 1-7, valid 5 and 7 (the final validation)
  EXPECT_NE(test::slurp(run / "train.log").find("metrics.jsonl: 1 records past step 5"),
            std::string::npos);
}

TEST(Resume, ANewRunDiscardsWhatAKilledFirstAttemptLeft) {
  const auto dir = test::temp_dir("resume_new");
  const fs::path run = dir / "run";
  fs::create_directories(run);
  std::ofstream(run / "metrics.jsonl") << R"({"kind":"train","step":1,"loss":1})"
                                       << "\n";
  std::ofstream(run / "config.json.tmp") << "{";
  test::train(run_config(run, 2));
  const auto keys = metric_keys(run);  // train 1, train 2, valid 2: nothing of the first attempt
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0], std::make_pair(std::string("train"), int64_t(1)));
  EXPECT_EQ(keys[1], std::make_pair(std::string("train"), int64_t(2)));
  EXPECT_TRUE(temporaries(run).empty());
  EXPECT_NE(test::slurp(run / "train.log").find("new run: discarded config.json.tmp"),
            std::string::npos);
}

TEST(Checkpoint, AWriteBeyondTheFileSizeLimitFailsNamingTheFileAndTheRunResumes) {
  const auto dir = test::temp_dir("fsize");
  const fs::path run = dir / "run";
  test::train(run_config(run, 5));
  const auto before = test::slurp(run / "last.pt");
  // The first checkpoint written after step 10's validation (step_10.pt) exceeds the limit.
  test::SpawnOptions limited;
  limited.file_size_limit = long(fs::file_size(run / "step_5.pt")) / 2;
  const auto failed = test::run_nmt(
      {"train", "--resume", run.string(), "--set", "train.max_steps=10"}, dir, "limited", limited);
  EXPECT_EQ(failed.code, 2) << failed.output;
  EXPECT_NE(failed.output.find("error: " + (run / "step_10.pt.tmp").string() +
                               ": cannot write checkpoint (File too large); " +
                               (run / "step_10.pt").string() + " is unchanged"),
            std::string::npos)
      << failed.output;
  EXPECT_FALSE(fs::exists(run / "step_10.pt"));
  EXPECT_EQ(test::slurp(run / "last.pt"), before);
  EXPECT_TRUE(temporaries(run).empty());
  const auto resumed =
      test::run_nmt({"train", "--resume", run.string(), "--set", "train.max_steps=10"}, dir, "ok");
  EXPECT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_EQ(read_checkpoint_state(run / "last.pt").step, 10);
}

TEST(RunDirLock, ASecondWriterIsRefusedNamingTheDirectoryAndTheHolder) {
  const auto dir = test::temp_dir("lock");
  {
    RunDirLock first(dir);
    test::expect_error(
        [&] { RunDirLock second(dir); },
        dir.string() + " is in use by another nmt train (pid " + std::to_string(::getpid()) + ",");
  }
  RunDirLock again(dir);  // released with its owner
}

TEST(RunDirLock, ATrainingRunKeepsOthersOutAndASigkilledRunResumesWithoutCleanUp) {
  const auto dir = test::temp_dir("lock_cli");
  const fs::path run = dir / "run";
  Config config = run_config(run, 0);
  config.train.max_epochs = 1000;
  config.train.validate_every = 2;
  save_config(config, dir / "config.json");
  const pid_t owner =
      test::start_nmt({"train", "--config", (dir / "config.json").string()}, dir / "owner.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(run / "last.pt") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(run / "last.pt")) << test::slurp(dir / "owner.log");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"train", "--resume", run.string()},
           {"train", "--config", (dir / "config.json").string()}}) {
    const auto refused = test::run_nmt(args, dir, "second", {}, 30);
    EXPECT_EQ(refused.code, 2);
    EXPECT_NE(refused.output.find(run.string() + " is in use by another nmt train (pid " +
                                  std::to_string(owner) + ","),
              std::string::npos)
        << refused.output;
  }
  ::kill(owner, SIGKILL);
  EXPECT_EQ(test::wait_nmt(owner), 128 + SIGKILL);
  const int64_t step = read_checkpoint_state(run / "last.pt").step;
  const auto resumed = test::run_nmt(
      {"train", "--resume", run.string(), "--set", "train.max_steps=" + std::to_string(step + 1)},
      dir, "resumed");
  EXPECT_EQ(resumed.code, 0) << resumed.output;
}

TEST(FaultCampaign, ThreeKillsLeaveLoadableCheckpointsTheSameWeightsAndOneHistory) {
  const auto dir = test::temp_dir("campaign");
  const std::string script = std::string(NMT_SOURCE_DIR) + "/scripts/bench/fault_campaign.sh";
  const pid_t pid =
      test::start_program("env",
                          {std::string("NMT=") + NMT_BINARY, "WORK=" + (dir / "work").string(),
                           "STEPS=30", "bash", script, "3"},
                          dir / "campaign.log");
  // Dozens of nmt processes (runs, resumes, an inspect per checkpoint): under ASan on a slow
  // host the campaign took 270 s.
  const int code = test::wait_nmt(pid, 900);
  const std::string output = test::slurp(dir / "campaign.log");
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("| final weights equal the uninterrupted run's bit for bit | pass |"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("3 kills"), std::string::npos) << output;
}

}  // namespace
}  // namespace nmt
