// Fine-tuning (nmt train --init-from) and reusing SentencePiece models (issue 45), plus exact
// resume under weighted corpora.
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/validation.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// A parent run (tiny fixture, en->de) of `steps` steps in `dir`/parent.
fs::path train_parent(const fs::path& dir, int64_t steps = 3) {
  test::train(test::step_config(dir / "parent", steps));
  return dir / "parent";
}

/// A fine-tuning config: the tiny model on the fixture's validation split as "in-domain" data.
Config child_config(const fs::path& run_dir) {
  Config config = test::step_config(run_dir, 2);
  config.data.train = {CorpusSpec::of_split("tiny_val")};
  config.data.vocab_size = 99;  // ignored: the tokenizer is the parent's
  config.train.validate_at_start = true;
  return config;
}

double max_difference(Seq2Seq a, Seq2Seq b) {
  double most = 0.0;
  auto others = b->named_parameters();
  for (const auto& item : a->named_parameters()) {
    most = std::max(most, (item.value() - others[item.key()]).abs().max().item<double>());
  }
  return most;
}

TEST(FineTune, CopiesTheTokenizerLoadsTheWeightsAndStartsAfresh) {
  const test::TempDir dir("finetune");
  const fs::path parent = train_parent(dir);
  const Config config = child_config(dir / "child");
  std::ostringstream console;
  Trainer(config, false, console, parent).run();

  EXPECT_EQ(test::read_text(dir / "child/spm.model"), test::read_text(parent / "spm.model"));
  const auto was = load_checkpoint(parent / "best.pt", at::kCPU);
  const auto now = load_checkpoint(dir / "child/last.pt", at::kCPU);
  EXPECT_EQ(now.state.step, 2);  // a new run: its own step count, from 0
  EXPECT_EQ(now.config.data.vocab_size, was.config.data.vocab_size);
  EXPECT_GT(max_difference(was.model, now.model), 0.0);  // the weights moved on the new data
  const auto record = nlohmann::json::parse(test::read_text(dir / "child/parent.json"));
  EXPECT_EQ(record["step"], was.state.step);
  EXPECT_NE(test::read_text(dir / "child/train.log").find("fine-tuning from"), std::string::npos);

  // validate_at_start: the first validation is the parent's score on the new data.
  const auto valid = test::records(dir / "child", "valid");
  ASSERT_FALSE(valid.empty());
  EXPECT_EQ(valid[0]["step"], 0);
  Seq2Seq parent_model = was.model;
  const auto split = load_corpus(config.data, config.data.valid.at(0), was.tokenizer);
  const auto expected = validate(parent_model, was.tokenizer, split, now.config, at::kCPU);
  EXPECT_NEAR(valid[0]["loss"].get<double>(), expected.loss(), 1e-6);
}

TEST(FineTune, KeepsTheOptimizerOnlyWhenAskedAndRejectsAnotherShape) {
  const test::TempDir dir("finetune_opt");
  const fs::path parent = train_parent(dir, 2);
  Config keep = child_config(dir / "keep");
  keep.train.init_keep = InitKeep::kOptimizer;
  std::ostringstream console;
  Trainer(keep, false, console, parent).run();
  const std::string log = test::read_text(dir / "keep/train.log");
  EXPECT_NE(log.find((parent / "last.pt").string() + " (step 2"), std::string::npos) << log;
  EXPECT_NE(log.find("its optimizer state kept"), std::string::npos);

  Config wider = child_config(dir / "wider");
  wider.model.d_ff = 128;
  test::expect_error([&] { Trainer(wider, false, console, parent); },
                     "the parent's model does not match the config: model.d_ff = 64 vs 128");
  Config dropout = child_config(dir / "dropout");
  dropout.model.dropout = 0.3;  // regularisation may change
  EXPECT_NO_THROW(Trainer(dropout, false, console, parent));
  test::expect_error([&] { Trainer(keep, false, console, parent); }, "already holds a run");
  test::expect_error([&] { Trainer(keep, true, console, parent); }, "give one of them");
}

TEST(SpmModel, AnExistingModelIsCopiedIntoTheRunAndUsed) {
  const test::TempDir dir("spm_reuse");
  const fs::path parent = train_parent(dir, 1);
  Config config = test::step_config(dir / "reuse", 1);
  config.data.spm_model = (parent / "spm.model").string();
  config.data.vocab_size = 40;  // ignored: nothing is trained
  test::train(config);
  EXPECT_EQ(test::read_text(dir / "reuse/spm.model"), test::read_text(parent / "spm.model"));
  EXPECT_EQ(load_checkpoint(dir / "reuse", at::kCPU).tokenizer.serialized(),
            load_checkpoint(parent, at::kCPU).tokenizer.serialized());
}

// The weighted mix is drawn from (data.seed, epoch): stopping mid-epoch and resuming gives the
// same batches, so the same losses, bit for bit.
TEST(WeightedCorpora, ResumeReproducesTheLosses) {
  const test::TempDir dir("weighted_resume");
  Config config = test::step_config(dir / "whole", 6);
  CorpusSpec heavy = CorpusSpec::of_split("tiny_val");
  heavy.weight = 3.0;
  CorpusSpec light = CorpusSpec::of_split("tiny");
  light.weight = 0.5;
  config.data.train = {light, heavy};
  test::expect_resume_reproduces(config, dir / "halves", 3);
}

}  // namespace
}  // namespace nmt
