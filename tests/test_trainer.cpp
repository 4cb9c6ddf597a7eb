#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "core/interrupt.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "decode/search.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train/validation.h"

extern char** environ;

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// One field of the train records (one per logged step) of a run's metrics.jsonl.
/// `key` of each metrics.jsonl record of `kind` (train, valid), in order.
std::vector<double> series(const fs::path& run_dir, const std::string& kind,
                           const std::string& key) {
  std::vector<double> values;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record["kind"] == kind) values.push_back(record[key].get<double>());
  }
  return values;
}

std::vector<double> train_series(const fs::path& run_dir, const std::string& key) {
  return series(run_dir, "train", key);
}

std::vector<double> train_losses(const fs::path& run_dir) { return train_series(run_dir, "loss"); }

/// tiny_config with a step limit instead of the one-epoch limit.
Config step_config(const fs::path& run_dir, int64_t max_steps) {
  Config config = test::tiny_config(run_dir);
  config.train.max_epochs = 0;
  config.train.max_steps = max_steps;
  return config;
}

TrainSummary train(const Config& config, bool resume = false) {
  std::ostringstream console;
  Trainer trainer(config, resume, console);
  return trainer.run();
}

/// Trains `config` to `stop_at` steps, then resumes it to its own max_steps.
void train_stopped_and_resumed(Config config, int64_t stop_at) {
  const int64_t steps = config.train.max_steps;
  config.train.max_steps = stop_at;
  EXPECT_EQ(train(config).steps, stop_at);
  config.train.max_steps = steps;
  EXPECT_EQ(train(config, /*resume=*/true).steps, steps);
}

/// Trains `whole`, and a copy of it in `halves_dir` stopped at `stop_at` and resumed; expects the
/// two loss curves to be bit-identical with max_steps records, and returns the whole run's.
std::vector<double> expect_resume_reproduces(const Config& whole, const fs::path& halves_dir,
                                             int64_t stop_at) {
  train(whole);
  Config halves = whole;
  halves.train.run_dir = halves_dir.string();
  train_stopped_and_resumed(halves, stop_at);
  const auto expected = train_losses(whole.train.run_dir);
  EXPECT_EQ(expected.size(), size_t(whole.train.max_steps));
  EXPECT_EQ(train_losses(halves_dir), expected);  // bit-identical on CPU
  return expected;
}

TEST(Trainer, ResumeGivesTheSameLossCurve) {
  const auto dir = test::temp_dir("resume");
  Config whole = test::tiny_config(dir / "whole");
  whole.train.max_steps = 12;
  expect_resume_reproduces(whole, dir / "halves", 5);
}

// Data-parallel CPU workers: the same run twice, and a run stopped and resumed, give
// bit-identical losses (each worker's dropout masks come from seeds drawn in order), and
// without dropout two workers' step is one worker's (the same mean gradient).
TEST(Trainer, DataParallelWorkersAreReproducibleAndMatchOneWorker) {
  const auto dir = test::temp_dir("workers");
  Config whole = step_config(dir / "whole", 8);
  whole.train.cpu_workers = 2;
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 3);
  Config again = whole;
  again.train.run_dir = (dir / "again").string();
  train(again);
  EXPECT_EQ(train_losses(dir / "again"), expected);

  std::vector<std::vector<double>> curves;
  for (const int64_t workers : {1, 2, 3}) {
    Config plain = step_config(dir / ("no_dropout_" + std::to_string(workers)), 8);
    plain.model.dropout = plain.model.attention_dropout = 0.0;
    plain.train.cpu_workers = workers;
    train(plain);
    curves.push_back(train_losses(dir / ("no_dropout_" + std::to_string(workers))));
  }
  ASSERT_EQ(curves[0].size(), 8u);
  for (size_t w = 1; w < curves.size(); ++w) {
    ASSERT_EQ(curves[w].size(), 8u);
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(curves[w][i], curves[0][i], 1e-3 * curves[0][i]);
  }
  EXPECT_LT(curves[1].back(), curves[1].front());  // and it learns
}

// Under subword sampling every epoch has its own segmentations, and a run resumed inside an
// epoch re-samples that epoch's exactly: the same losses as an uninterrupted run, which differ
// from a run without sampling.
TEST(Trainer, SubwordSamplingResumesWithTheSameSegmentations) {
  const auto dir = test::temp_dir("resume_sampling");
  Config whole = step_config(dir / "whole", 40);
  whole.data.subword_alpha = 0.2;
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 5);  // inside epoch 1
  const auto epochs = train_series(dir / "whole", "epoch");
  ASSERT_EQ(epochs.size(), 40u);
  EXPECT_GE(epochs.back(), 2.0);  // into a second epoch, with its own segmentations
  Config plain = whole;
  plain.train.run_dir = (dir / "plain").string();
  plain.data.subword_alpha = 0.0;
  train(plain);
  EXPECT_NE(train_losses(dir / "plain"), expected);
}

// Word dropout draws its masks as the other dropout layers do (seeds from the checkpointed
// generator, one stream per data-parallel worker): a run stopped and resumed gives the
// uninterrupted run's losses, which differ from a run without word dropout.
TEST(Trainer, WordDropoutResumesWithTheSameMasks) {
  const auto dir = test::temp_dir("word_dropout");
  Config whole = step_config(dir / "whole", 8);
  whole.model.word_dropout = 0.2;
  whole.train.cpu_workers = 2;
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 3);
  Config plain = whole;
  plain.train.run_dir = (dir / "plain").string();
  plain.model.word_dropout = 0.0;
  train(plain);
  EXPECT_NE(train_losses(dir / "plain"), expected);
}

// R-Drop stacks each batch on itself. Without dropout both copies are the same model, the KL
// term is 0 and the halved sums are the plain run's, so the loss curves match. With dropout the
// copies differ: against a run with the same masks and a negligible α, α = 5 adds a positive KL
// term to the first step's loss, and it still learns.
TEST(Trainer, RDropWithoutDropoutIsThePlainLossAndWithDropoutAddsTheKlTerm) {
  const auto dir = test::temp_dir("rdrop");
  const auto losses = [&](Config config, const std::string& name, double alpha) {
    config.train.run_dir = (dir / name).string();
    config.train.rdrop_alpha = alpha;
    train(config);
    const auto curve = train_losses(dir / name);
    EXPECT_EQ(curve.size(), 8u) << name;
    return curve;
  };
  Config no_dropout = step_config(dir / "unused", 8);
  no_dropout.model.dropout = no_dropout.model.attention_dropout = 0.0;
  const auto plain = losses(no_dropout, "plain", 0.0);
  const auto doubled = losses(no_dropout, "doubled", 5.0);
  ASSERT_EQ(doubled.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(doubled[i], plain[i], 1e-3 * plain[i]);

  const Config dropout = step_config(dir / "unused", 8);
  const auto negligible = losses(dropout, "negligible", 1e-9);
  const auto rdrop = losses(dropout, "rdrop", 5.0);
  ASSERT_FALSE(rdrop.empty());
  ASSERT_FALSE(negligible.empty());
  EXPECT_GT(rdrop.front(), negligible.front() + 1e-4);  // the same masks, plus α·KL
  EXPECT_LT(rdrop.back(), rdrop.front());
}

// The trainer feeds the budget's progress to the schedule: with max_steps = 4 and no warmup, the
// linear schedule's steps use lr · (1 - k / 4), the last one 0.
TEST(Trainer, LinearScheduleDecaysToZeroAtTheStepLimit) {
  const auto dir = test::temp_dir("linear_schedule");
  Config config = step_config(dir / "run", 4);
  config.train.schedule = Schedule::kLinear;
  config.train.warmup_steps = 0;
  train(config);
  const auto lrs = train_series(dir / "run", "lr");
  ASSERT_EQ(lrs.size(), 4u);
  for (size_t k = 0; k < lrs.size(); ++k) {
    EXPECT_NEAR(lrs[k], config.train.lr * (1.0 - double(k + 1) / 4.0), 1e-12) << "step " << k + 1;
  }
}

// Validation BLEU is greedy whatever the decode section says: a config that decodes with MBR
// over the beam or over samples trains and validates exactly like the plain one.
TEST(Trainer, ValidationIsGreedyWhateverTheDecodeSectionAsks) {
  const auto dir = test::temp_dir("valid_greedy");
  Config plain = step_config(dir / "plain", 3);
  plain.train.validate_every = 3;
  plain.train.valid_bleu = true;
  train(plain);
  const auto expected = series(dir / "plain", "valid", "bleu");
  ASSERT_FALSE(expected.empty());
  const std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
      {"beam_mbr", {"decode.beam=4", "decode.mbr=4"}},
      {"sample_mbr", {"decode.sample=8", "decode.mbr=8"}}};
  for (const auto& [name, overrides] : variants) {
    Config config = plain;
    config.train.run_dir = (dir / name).string();
    apply_overrides(config, overrides);
    train(config);
    EXPECT_EQ(series(dir / name, "valid", "bleu"), expected) << name;
  }
}

// A validation record names the epoch its weights are in, as the train records do: a run that
// stops inside its second epoch validates "epoch 2", not the count of finished epochs.
TEST(Trainer, ValidationRecordsNameTheEpochUnderWay) {
  const auto dir = test::temp_dir("valid_epoch");
  Config config = test::tiny_config(dir / "run");  // max_epochs 1
  std::vector<std::pair<int64_t, int64_t>> valid;  // (step, epoch)
  const auto read_valid = [&] {
    valid.clear();
    std::ifstream in(dir / "run" / "metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto record = nlohmann::json::parse(line);
      if (record["kind"] == "valid") valid.emplace_back(record["step"], record["epoch"]);
    }
  };
  train(config);
  read_valid();
  ASSERT_EQ(valid.size(), 1u);
  const int64_t steps_per_epoch = valid[0].first;
  EXPECT_EQ(valid[0].second, 1);  // at the end of epoch 1
  ASSERT_GT(steps_per_epoch, 1);
  remove_tree(dir / "run");
  config.train.max_epochs = 0;
  config.train.max_steps = steps_per_epoch + 1;  // one step into epoch 2
  train(config);
  read_valid();
  ASSERT_EQ(valid.size(), 2u);
  EXPECT_EQ(valid[1], std::make_pair(steps_per_epoch + 1, int64_t(2)));
  EXPECT_EQ(train_series(dir / "run", "epoch").back(), 2.0);
}

// A limit one step after a validation: the final weights replace that step checkpoint, so
// averaging the last N does not count nearly the same weights twice; further away both stay.
TEST(Trainer, FinalCheckpointReplacesANearlyIdenticalStepCheckpoint) {
  const auto dir = test::temp_dir("final_checkpoint");
  const auto step_files = [](const fs::path& run) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(run)) {
      const auto name = entry.path().filename().string();
      if (name.rfind("step_", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  for (const int64_t steps : {21, 22}) {
    Config config = step_config(dir / std::to_string(steps), steps);
    config.train.validate_every = 20;  // "near": under a tenth of that, 2 steps
    config.train.keep_checkpoints = 5;
    train(config);
    const std::vector<std::string> expected =
        steps == 21 ? std::vector<std::string>{"step_21.pt"}
                    : std::vector<std::string>{"step_20.pt", "step_22.pt"};
    EXPECT_EQ(step_files(dir / std::to_string(steps)), expected) << steps << " steps";
  }
}

TEST(Trainer, RefusesToOverwriteARunAndRejectsMismatchedResume) {
  const auto dir = test::temp_dir("mismatch");
  Config config = test::tiny_config(dir / "run");
  config.train.max_steps = 2;
  train(config);
  test::expect_error([&] { train(config); }, "already holds a run (last.pt)");
  Config changed = config;
  changed.model.d_model = 64;
  test::expect_error([&] { train(changed, true); }, "model.d_model = 32 vs 64");
  Config decayed = config;  // Adam's state cannot become AdamW's
  decayed.train.weight_decay = 0.1;
  test::expect_error([&] { train(decayed, true); },
                     "train.weight_decay = 0, train.weight_decay_on = 'all' (now 0.1, 'all')");
  // nor can one AdamW parameter group become two
  Config grouped = test::tiny_config(dir / "grouped");
  grouped.train.max_steps = 2;
  grouped.train.weight_decay = 0.1;
  train(grouped);
  grouped.train.weight_decay_on = DecayOn::kLinear;
  test::expect_error([&] { train(grouped, true); },
                     "train.weight_decay = 0.1, train.weight_decay_on = 'all' (now 0.1, 'linear')");
  Config elsewhere = test::tiny_config(dir / "nothing");
  test::expect_error([&] { train(elsewhere, true); }, "nothing to resume");
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
  test::expect_error([&] { load_checkpoint(dir, at::kCPU); }, "no best.pt or last.pt");
}

TEST(Trainer, OverfitsATinyCorpusUntilGreedyReproducesTheTargets) {
  const auto dir = test::temp_dir("overfit");
  const auto src = read_lines(fs::path(NMT_FIXTURES_DIR) / "tiny.en");
  const auto tgt = read_lines(fs::path(NMT_FIXTURES_DIR) / "tiny.de");
  fs::create_directories(dir / "data");
  std::ofstream en(dir / "data" / "over.en"), de(dir / "data" / "over.de");
  for (int copy = 0; copy < 16; ++copy) {
    for (int i = 0; i < 8; ++i) en << src[i] << "\n", de << tgt[i] << "\n";
  }
  en.close(), de.close();
  Config config = test::tiny_config(dir / "run");
  config.data.dir = (dir / "data").string();
  config.data.train_split = config.data.valid_split = "over";
  config.model.d_model = 64;
  config.model.d_ff = 128;
  config.model.dropout = config.model.attention_dropout = 0.0;
  config.train.label_smoothing = 0.0;
  config.train.max_epochs = 25;
  config.train.log_every = 50;
  config.train.keep_checkpoints = 0;
  train(config);
  LoadedModel loaded = load_checkpoint(dir / "run" / "last.pt", at::kCPU);
  std::vector<std::vector<int64_t>> sources;
  for (int i = 0; i < 8; ++i) sources.push_back(loaded.tokenizer.encode_src(src[i]));
  const auto hypotheses = decode_all(loaded.model, sources, DecodeConfig{}, at::kCPU);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(loaded.tokenizer.decode_tgt(hypotheses[i][0].tokens), tgt[i]) << "pair " << i;
  }
  // Validation decodes in the training precision; bf16 greedy reproduces the targets as well.
  std::vector<double> losses;
  for (const char* precision : {"fp32", "bf16"}) {
    Config validation_config = loaded.config;
    validation_config.train.precision = require_choice<Precision>("precision", precision);
    validation_config.train.valid_bleu = true;
    const auto split = load_split(validation_config.data, "over", loaded.tokenizer);
    const auto result =
        validate(loaded.model, loaded.tokenizer, split, validation_config, at::kCPU);
    EXPECT_DOUBLE_EQ(result.bleu, 100.0) << precision;
    EXPECT_LT(result.loss, 0.1) << precision;
    losses.push_back(result.loss);
  }
  EXPECT_NE(losses[0], losses[1]);  // bf16 matmuls round differently: the guard is in effect
}

/// Runs `args` with the real nmt binary, output to `log`; returns the pid.
pid_t spawn_nmt(const std::vector<std::string>& args, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> all = {NMT_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, NMT_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Cli, SigintFinishesTheStepSavesAndExplainsHowToResume) {
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
  const std::string output = read_file(dir / "log");
  EXPECT_NE(output.find("resume with: nmt train --resume"), std::string::npos) << output;
  const int64_t stopped_at = load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step;
  EXPECT_GE(stopped_at, 3);
  // The printed command works as printed (RUN_DIR as a separate argument) and continues there.
  const pid_t resumed = spawn_nmt({"train", "--resume", (dir / "run").string(), "--set",
                                   "train.max_steps=" + std::to_string(stopped_at + 2)},
                                  dir / "resume_log");
  EXPECT_EQ(wait_exit_code(resumed), 0) << read_file(dir / "resume_log");
  EXPECT_EQ(load_checkpoint(dir / "run" / "last.pt", at::kCPU).state.step, stopped_at + 2);
}

TEST(Cli, PrintConfigShowsTheResolvedConfigAndTrainsNothing) {
  const auto dir = test::temp_dir("print_config");
  Config config = test::tiny_config(dir / "run");
  save_config(config, dir / "config.json");
  const auto printed = [&](const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> all = {"train"};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--print-config");
    const pid_t pid = spawn_nmt(all, dir / log);
    EXPECT_EQ(wait_exit_code(pid), 0) << read_file(dir / log);
    return nlohmann::json::parse(read_file(dir / log));
  };
  const std::string file = (dir / "config.json").string();
  // --set applies in order (the last one wins); an empty run_dir resolves to checkpoints/NAME.
  const auto named = printed({"--config", file, "--set", "train.name=first", "--set",
                              "train.run_dir=", "--set", "train.name=print_config_probe",
                              "--set", "decode.beam=3"},
                             "named");
  EXPECT_EQ(named["train"]["run_dir"], "checkpoints/print_config_probe");
  EXPECT_EQ(named["decode"]["beam"], 3);
  EXPECT_EQ(named["model"]["d_model"], config.model.d_model);
  EXPECT_FALSE(fs::exists("checkpoints/print_config_probe"));
  EXPECT_FALSE(fs::exists(dir / "run"));
  // A resumed run prints its own config.json, run_dir = the directory given.
  const pid_t trained = spawn_nmt({"train", "--config", file, "--set", "train.max_steps=1"},
                                  dir / "train_log");
  ASSERT_EQ(wait_exit_code(trained), 0) << read_file(dir / "train_log");
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
  EXPECT_NE(read_file(dir / "bad_log").find("train.name"), std::string::npos)
      << read_file(dir / "bad_log");
}

TEST(Cli, Bf16TrainingOnCpuRunsWithSpinningOpenMpThreads) {
  // nmt chooses the policy only when the user has not; clear the variables it would respect.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("NMT_NO_REEXEC");
  unsetenv("NMT_CHOSEN_WAIT_POLICY");
  for (const std::string precision : {"bf16", "fp32"}) {
    const auto dir = test::temp_dir("wait_policy_" + precision);
    Config config = test::tiny_config(dir / "run");
    config.train.precision = require_choice<Precision>("precision", precision);
    config.train.max_steps = 1;
    save_config(config, dir / "config.json");
    const pid_t pid = spawn_nmt({"train", "--config", (dir / "config.json").string()}, dir / "log");
    EXPECT_EQ(wait_exit_code(pid), 0) << read_file(dir / "log");
    const std::string expected = precision == "bf16" ? "ACTIVE" : "PASSIVE";
    EXPECT_NE(read_file(dir / "run" / "train.log").find("OMP_WAIT_POLICY=" + expected),
              std::string::npos)
        << precision << ": " << read_file(dir / "run" / "train.log");
  }
}

TEST(Cli, StrayArgumentIsAnError) {
  const auto dir = test::temp_dir("cli_stray");
  const pid_t pid = spawn_nmt({"train", "--config", "x.json", "extra"}, dir / "log");
  EXPECT_EQ(wait_exit_code(pid), 2);
  EXPECT_EQ(read_file(dir / "log"), "error: unexpected argument 'extra' (see nmt train --help)\n");
}

TEST(Cli, BadConfigValueIsOneLineNamingTheKey) {
  const auto dir = test::temp_dir("cli_config");
  const pid_t pid = spawn_nmt({"train", "--set", "model.dropout=2"}, dir / "log");
  EXPECT_EQ(wait_exit_code(pid), 2);
  const std::string output = read_file(dir / "log");
  EXPECT_EQ(output, "error: model.dropout = 2 is out of range: must be in [0, 0.99]\n");
}

}  // namespace
}  // namespace nmt
