// train/trainer.cpp: whole training runs of the tiny config (resume, workers, regularisers,
// schedules, run directories).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/interrupt.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "decode/search.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train/validation.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(Trainer, ResumeGivesTheSameLossCurve) {
  const auto dir = test::temp_dir("resume");
  Config whole = test::tiny_config(dir / "whole");
  whole.train.max_steps = 12;
  expect_resume_reproduces(whole, dir / "halves", 5);
}

/// A console that raises the interrupt flag once `line` has been written to it.
struct InterruptingConsole : std::stringbuf {
  explicit InterruptingConsole(std::string line) : line_(std::move(line)) {}
  int sync() override {
    if (str().find(line_) != std::string::npos) request_interrupt();
    return 0;
  }
  std::streamsize xsputn(const char* text, std::streamsize count) override {
    const auto written = std::stringbuf::xsputn(text, count);
    sync();
    return written;
  }
  std::string line_;
  std::ostream stream{this};
};

// A warmup share is a function of the recorded progress: a resume continues the same schedule,
// and the log says at which step the peak came.
TEST(Trainer, AWarmupShareResumesOnTheSameScheduleAndLogsItsPeak) {
  const auto dir = test::temp_dir("resume_share");
  Config whole = test::tiny_config(dir / "whole");
  whole.train.max_steps = 12;
  whole.train.schedule = Schedule::kLinear;
  whole.train.warmup = Warmup{0, 25.0};
  train(whole);
  // The halves keep the whole run's budget (a lower max_steps would be another schedule): the
  // first is interrupted as SIGINT would, when its log says step 5 is done.
  Config halves = whole;
  halves.train.run_dir = (dir / "halves").string();
  InterruptingConsole console("step 5 |");
  const TrainSummary first = Trainer(halves, false, console.stream).run();
  request_interrupt(false);
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.steps, 5);
  EXPECT_EQ(train(halves, /*resume=*/true).steps, 12);
  EXPECT_EQ(train_losses(dir / "halves"), train_losses(dir / "whole"));
  EXPECT_NE(test::read_text(dir / "whole" / "train.log")
                .find("warmup: the peak learning rate at step 3, 25% of the budget (max_steps 12"),
            std::string::npos)
      << test::read_text(dir / "whole" / "train.log");
}

// The encoded training corpus (data/encoded_corpus.h) is written by the first run and mapped by
// the resume, which reproduces the whole run's losses; a new run that finds the file (as nmt
// prepare leaves it) maps it and trains the same.
TEST(Trainer, EncodedCorpusIsWrittenOnceAndMappedByTheResume) {
  const auto dir = test::temp_dir("encoded_resume");
  const Config whole = step_config(dir / "whole", 8);
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 3);
  const std::string log = read_text(dir / "halves" / "train.log");
  EXPECT_NE(log.find("encoded training corpus: wrote"), std::string::npos) << log;
  EXPECT_NE(log.find("because there is none yet"), std::string::npos) << log;
  EXPECT_NE(log.find("encoded training corpus: mapped"), std::string::npos) << log;
  Config copied = whole;
  copied.train.run_dir = (dir / "copied").string();
  fs::create_directories(dir / "copied");
  for (const char* name : {"spm.model", "train.corpus"}) {
    fs::copy_file(dir / "whole" / name, dir / "copied" / name);
  }
  train(copied);
  EXPECT_EQ(train_losses(dir / "copied"), expected);
  EXPECT_NE(read_text(dir / "copied" / "train.log").find("encoded training corpus: mapped"),
            std::string::npos);
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
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(curves[w][i], curves[0][i], 1e-6 * curves[0][i]);
  }
  EXPECT_LT(curves[1].back(), curves[1].front());  // and it learns
}

/// Expects the last.pt parameters of two runs to be bit-identical.
void expect_same_weights(const fs::path& a, const fs::path& b) {
  auto left = load_checkpoint(a / "last.pt", at::kCPU).model->named_parameters();
  auto right = load_checkpoint(b / "last.pt", at::kCPU).model->named_parameters();
  for (const auto& item : left) {
    EXPECT_TRUE(torch::equal(item.value(), right[item.key()])) << item.key();
  }
}

// Three workers with accum_steps 2: each worker sums its shards' gradients in a buffer of its
// own and the buffers are added in worker order, so the run is exact: run twice, and stopped and
// resumed, it gives bit-identical losses and weights. (Summed by the threads into the shared
// .grad, the order, and so the last bits, followed thread scheduling.)
TEST(Trainer, ThreeWorkersAccumulatingTwoBatchesAreExactRunToRunAndResumed) {
  const auto dir = test::temp_dir("workers3");
  Config whole = step_config(dir / "whole", 8);
  whole.train.cpu_workers = 3;
  whole.train.accum_steps = 2;
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 3);
  expect_same_weights(dir / "whole", dir / "halves");
  for (const char* name : {"again", "third"}) {
    Config again = whole;
    again.train.run_dir = (dir / name).string();
    train(again);
    EXPECT_EQ(train_losses(dir / name), expected) << name;
    expect_same_weights(dir / "whole", dir / name);
  }
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

// data.augment modifies each epoch's pairs from (data.seed, epoch): a run resumed inside an
// epoch gets that epoch's modifications back, so its losses are the uninterrupted run's, and
// they differ from a run without augmentation.
TEST(Trainer, AugmentationResumesWithTheSameModifications) {
  const auto dir = test::temp_dir("resume_augment");
  Config whole = step_config(dir / "whole", 40);
  whole.data.augment.upper = 0.3;
  whole.data.augment.typos = 0.3;
  const auto expected = expect_resume_reproduces(whole, dir / "halves", 5);
  EXPECT_GE(train_series(dir / "whole", "epoch").back(), 2.0);
  Config plain = whole;
  plain.train.run_dir = (dir / "plain").string();
  plain.data.augment = AugmentConfig();
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
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(doubled[i], plain[i], 1e-6 * plain[i]);

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
  config.train.warmup.steps = 0;
  train(config);
  const auto lrs = train_series(dir / "run", "lr");
  ASSERT_EQ(lrs.size(), 4u);
  for (size_t k = 0; k < lrs.size(); ++k) {
    EXPECT_NEAR(lrs[k], config.train.lr * (1.0 - double(k + 1) / 4.0), 1e-12) << "step " << k + 1;
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
  config.data.train = {CorpusSpec::of_split("over")};
  config.data.valid = {CorpusSpec::of_split("over")};
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
    EXPECT_DOUBLE_EQ(result.get("bleu"), 100.0) << precision;
    EXPECT_LT(result.loss(), 0.1) << precision;
    losses.push_back(result.loss());
  }
  EXPECT_NE(losses[0], losses[1]);  // bf16 matmuls round differently: the guard is in effect
}
}  // namespace
}  // namespace nmt
