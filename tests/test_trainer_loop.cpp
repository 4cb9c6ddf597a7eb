// train/trainer_loop.cpp: validation, checkpoints and the limits that stop a run.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/batching.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train/validation.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

// A validation record names the epoch its weights are in, as the train records do: a run that
// stops inside its second epoch validates "epoch 2", not the count of finished epochs.
TEST(TrainerLoop, ValidationRecordsNameTheEpochUnderWay) {
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
TEST(TrainerLoop, FinalCheckpointReplacesANearlyIdenticalStepCheckpoint) {
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

/// Writes the first `lines` pairs of the fixture's training split as split `name` of `data_dir`.
void write_part(const fs::path& data_dir, const std::string& name, size_t lines) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  fs::create_directories(data_dir);
  for (const std::string lang : {"en", "de"}) {
    auto text = read_lines(fixtures / ("tiny." + lang));
    text.resize(lines);
    std::ofstream out(data_dir / (name + "." + lang));
    for (const auto& line : text) out << line << "\n";
  }
}

// train.patience and best.pt, replayed on the run's own validation records: best.pt is the
// step with the lowest validation loss so far and holds the weights that scored it, and the
// run stops at the validation that makes `patience` in a row without a new best.
TEST(TrainerLoop, BestCheckpointAndPatienceFollowTheValidationRecords) {
  const auto dir = test::temp_dir("patience");
  Config config = step_config(dir / "run", 300);
  config.train.validate_every = 2;
  config.train.patience = 4;
  config.train.lr = 0.05;
  config.train.warmup.steps = 1;
  config.train.schedule = Schedule::kConstant;
  const auto summary = train(config);
  double best = std::numeric_limits<double>::quiet_NaN();
  int64_t best_step = -1, stop_step = -1, bad = 0;
  bool recovered = false;  // a new best after a worse validation: the count must start again
  const auto valid = records(dir / "run", "valid");
  for (const auto& record : valid) {
    const double loss = record["loss"];
    if (std::isnan(best) || loss < best) {
      recovered = recovered || bad > 0;
      best = loss, best_step = record["step"], bad = 0;
    } else if (++bad == config.train.patience) {
      stop_step = record["step"];
      break;
    }
  }
  ASSERT_GT(stop_step, 0) << "the run never stopped early: the test needs one that does";
  ASSERT_TRUE(recovered) << "the run needs a new best after a worse validation before it stops";
  EXPECT_EQ(summary.steps, stop_step);
  EXPECT_EQ(valid.back()["step"], stop_step);
  EXPECT_NE(summary.stop_reason.find("early stopping"), std::string::npos) << summary.stop_reason;
  EXPECT_EQ(summary.best_metric, best);
  auto loaded = load_checkpoint(dir / "run" / "best.pt", at::kCPU);
  EXPECT_EQ(loaded.state.step, best_step);
  EXPECT_EQ(loaded.state.best_metric, best);
  const auto split = load_split(loaded.config.data, "tiny_val", loaded.tokenizer);
  EXPECT_EQ(validate(loaded.model, loaded.tokenizer, split, loaded.config, at::kCPU).loss(), best);
}

// train.max_minutes: the run stops after the first step that ends past the limit (every step
// is logged: all records but the last are within it). A run that ignored the limit would go on
// to the 2,000-step backstop.
TEST(TrainerLoop, MaxMinutesStopsAtTheFirstStepPastTheLimit) {
  const auto dir = test::temp_dir("max_minutes");
  Config config = step_config(dir / "run", 2000);
  config.train.max_minutes = 0.005;  // 0.3 s
  const auto summary = train(config);
  EXPECT_EQ(summary.stop_reason, "max_minutes reached");
  const auto elapsed = train_series(dir / "run", "elapsed_s");
  ASSERT_GE(elapsed.size(), 2u);
  EXPECT_EQ(summary.steps, static_cast<int64_t>(elapsed.size()));
  EXPECT_GE(elapsed.back(), 0.3);
  EXPECT_LT(elapsed[elapsed.size() - 2], 0.3);
  // Each train record has the process's resident memory and the part of it allocated: a run
  // that fills the host's memory shows when it began, and whether the program or the allocator
  // held it.
  const auto rss = train_series(dir / "run", "rss_mb");
  const auto heap = train_series(dir / "run", "heap_mb");
  ASSERT_EQ(rss.size(), elapsed.size());
  ASSERT_EQ(heap.size(), elapsed.size());
  for (size_t i = 0; i < rss.size(); ++i) {
    EXPECT_GT(rss[i], 10.0);
    if (!test::asan_allocator()) {  // ASan's malloc has no such count
      EXPECT_GT(heap[i], 1.0);
    }
  }
}

// train.validate_at_start validates the initial weights as step 0 and leaves training alone:
// the same loss curve, bit for bit, as the run without it.
TEST(TrainerLoop, ValidateAtStartValidatesStepZeroWithoutChangingTraining) {
  const auto dir = test::temp_dir("validate_at_start");
  Config plain = step_config(dir / "plain", 4);
  plain.train.validate_every = 4;
  Config at_start = plain;
  at_start.train.run_dir = (dir / "at_start").string();
  at_start.train.validate_at_start = true;
  train(plain);
  train(at_start);
  const auto with = records(dir / "at_start", "valid"), without = records(dir / "plain", "valid");
  ASSERT_EQ(with.size(), 2u);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(with[0]["step"], 0);
  EXPECT_GT(with[0]["loss"].get<double>(), with[1]["loss"].get<double>());  // untrained weights
  EXPECT_EQ(with[1]["loss"], without[0]["loss"]);
  EXPECT_EQ(train_losses(dir / "at_start"), train_losses(dir / "plain"));
}

// train.monitor_splits: each validation record also holds the loss, BLEU and chrF of every
// monitored split, those validate() gives the same weights on that split.
TEST(TrainerLoop, MonitorSplitsAreScoredAtEveryValidation) {
  const auto dir = test::temp_dir("monitor");
  write_part(dir / "data", "tiny", 400);
  write_part(dir / "data", "mon", 30);
  for (const std::string lang : {"en", "de"}) {
    fs::copy_file(fs::path(NMT_FIXTURES_DIR) / ("tiny_val." + lang),
                  dir / "data" / ("tiny_val." + lang));
  }
  Config config = step_config(dir / "run", 3);
  config.data.dir = (dir / "data").string();
  config.train.validate_every = 3;
  config.train.valid_bleu = true;
  config.train.valid_max_len_offset = 4;
  config.train.monitor_splits = {CorpusSpec::of_split("mon")};
  train(config);
  const auto valid = records(dir / "run", "valid");
  ASSERT_EQ(valid.size(), 1u);
  auto loaded = load_checkpoint(dir / "run" / "last.pt", at::kCPU);
  const auto split = load_split(loaded.config.data, "mon", loaded.tokenizer);
  const auto expected = validate(loaded.model, loaded.tokenizer, split, loaded.config, at::kCPU);
  EXPECT_EQ(valid[0]["loss_mon"].get<double>(), expected.loss());
  EXPECT_EQ(valid[0]["bleu_mon"].get<double>(), expected.get("bleu"));
  EXPECT_EQ(valid[0]["chrf_mon"].get<double>(), expected.get("chrf"));
  EXPECT_NE(valid[0]["loss_mon"], valid[0]["loss"]);  // another split than the validation one
}

// train.accum_steps 2 over two batches is one step on their union: a corpus of 12 pairs as one
// batch per epoch, against the same corpus cut into exactly two batches per epoch (a budget
// found below) with accum_steps 2. Dropout off: the same loss curve up to summation order.
TEST(TrainerLoop, AccumulatingTwoBatchesEqualsOneBatchOfTwiceTheSize) {
  const auto dir = test::temp_dir("accum");
  write_part(dir / "data", "part", 12);
  Config one = test::tiny_config(dir / "one");
  one.data.dir = (dir / "data").string();
  one.data.train = {CorpusSpec::of_split("part")};
  one.data.valid = {CorpusSpec::of_split("part")};
  one.data.batch_tokens = 100000;
  one.model.dropout = one.model.attention_dropout = 0.0;
  one.train.max_epochs = 4;
  EXPECT_EQ(train(one).steps, 4);
  const auto tokenizer = prepare_tokenizer(one.data, dir / "one");
  const auto examples = load_split(one.data, "part", tokenizer).examples;
  int64_t budget = 0;  // the smallest that gives two batches in each of the four epochs
  for (int64_t b = 1; b < 2000 && budget == 0; ++b) {
    BatchingOptions options = batching_options(one.data);
    options.batch_tokens = b;
    bool two = true;
    for (int64_t epoch = 0; epoch < 4; ++epoch)
      two = two && make_batches(examples, options, epoch).size() == 2;
    if (two) budget = b;
  }
  ASSERT_GT(budget, 0);
  Config two = one;
  two.train.run_dir = (dir / "two").string();
  two.data.batch_tokens = budget;
  two.train.accum_steps = 2;
  EXPECT_EQ(train(two).steps, 4);
  const auto expected = train_losses(dir / "one"), got = train_losses(dir / "two");
  ASSERT_EQ(expected.size(), 4u);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-6 * expected[i]) << i;
  // Without accumulation the two halves are separate steps: another curve.
  Config halves = two;
  halves.train.run_dir = (dir / "halves").string();
  halves.train.accum_steps = 1;
  EXPECT_EQ(train(halves).steps, 8);
}

}  // namespace
}  // namespace nmt
