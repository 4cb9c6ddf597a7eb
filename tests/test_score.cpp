// decode/evaluation.h teacher_forced_scores and cli/cmd_score.cpp: forced decoding gives the
// log-probability beam search reports for its own output, one score per pair, in input order.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "decode/evaluation.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

const std::vector<std::string> kSources = {"a dog runs .", "two men are playing football .",
                                           "a woman in a red dress .", "people walk .",
                                           "a child is eating an apple on the grass ."};

// Every hypothesis of a beam's n-best list, scored by forced decoding: its log-probability over
// the GNMT penalty is the score beam search gave it.
TEST(Score, ForcedDecodingGivesBeamSearchsOwnScores) {
  for (double alpha : {0.0, 1.0, 2.0}) {
    DecodeConfig config;
    config.beam = 4;
    config.nbest = 4;
    config.length_penalty = alpha;
    config.max_len_offset = 30;
    Seq2Seq model = fixture_model(5, /*eos_bias=*/2.0);
    Translator translator(model, fixture_tokenizer(), config, at::kCPU);
    const auto results = translator.translate(kSources);
    std::vector<Example> examples;
    std::vector<double> expected;
    for (size_t i = 0; i < kSources.size(); ++i) {
      for (const auto& hypothesis : results[i].nbest) {
        const auto src = fixture_tokenizer().encode_src(kSources[i]);
        if (int64_t(hypothesis.tokens.size()) >=
            max_output_length(model, int64_t(src.size()), config)) {
          continue;  // cut at the limit: no eos in its log-probability
        }
        examples.push_back({src, hypothesis.tokens});
        expected.push_back(hypothesis.score);
      }
    }
    ASSERT_GE(examples.size(), 10u);
    const auto scores = teacher_forced_scores(model, examples, 4096, at::kCPU);
    ASSERT_EQ(scores.size(), examples.size());
    for (size_t i = 0; i < examples.size(); ++i) {
      EXPECT_EQ(scores[i].tokens, int64_t(examples[i].tgt.size()) + 1);
      const double penalised = scores[i].log_prob / gnmt_length_penalty(scores[i].tokens, alpha);
      EXPECT_NEAR(penalised, expected[i], 1e-5 * std::max(1.0, std::abs(expected[i])))
          << "alpha " << alpha << ", hypothesis " << i;
    }
  }
}

// Scores come back in input order whatever the batching; their sum is the corpus loss.
TEST(Score, OneScorePerPairInInputOrderWhateverTheBatches) {
  Seq2Seq model = fixture_model(2);
  std::vector<Example> examples;
  for (size_t i = 0; i < kSources.size(); ++i) {
    examples.push_back({fixture_tokenizer().encode_src(kSources[i]),
                        fixture_tokenizer().encode_tgt(kSources[(i + 2) % kSources.size()])});
  }
  const auto one_batch = teacher_forced_scores(model, examples, 100000, at::kCPU);
  const auto small_batches = teacher_forced_scores(model, examples, 20, at::kCPU);
  std::vector<Example> reversed(examples.rbegin(), examples.rend());
  const auto backwards = teacher_forced_scores(model, reversed, 100000, at::kCPU);
  double total = 0.0;
  int64_t tokens = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    EXPECT_EQ(one_batch[i].tokens, int64_t(examples[i].tgt.size()) + 1);
    EXPECT_LT(one_batch[i].log_prob, 0.0);
    EXPECT_NEAR(one_batch[i].log_prob, small_batches[i].log_prob, 1e-4);
    EXPECT_NEAR(one_batch[i].log_prob, backwards[examples.size() - 1 - i].log_prob, 1e-4);
    total -= one_batch[i].log_prob;
    tokens += one_batch[i].tokens;
  }
  EXPECT_NE(one_batch[0].log_prob, one_batch[1].log_prob);
  const LossStats loss = teacher_forced_loss(model, examples, 100000, at::kCPU);
  EXPECT_EQ(loss.tokens, tokens);
  EXPECT_NEAR(loss.loss_sum, total, 1e-3);
}

TEST(Score, APairLongerThanTheModelReadsIsAnErrorNamingIt) {
  Seq2Seq model = fixture_model(2, 0.0, /*max_len=*/16);
  std::vector<Example> examples = {{{5, 6}, {7, 8}}, {{5, 6}, std::vector<int64_t>(20, 7)}};
  try {
    teacher_forced_scores(model, examples, 4096, at::kCPU);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pair 2: target has 20 pieces"), std::string::npos)
        << e.what();
  }
}

void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
}

TEST(CmdScore, OneLinePerPairAndOnlyTheNumberWhenAsked) {
  const auto dir = temp_dir("cmd_score");
  Config config = fixture_config();
  auto model = fixture_model(7);
  save_checkpoint(dir / "m.pt", config, model, fixture_tokenizer(), {});
  write_lines(dir / "src.en", kSources);
  std::vector<std::string> targets(kSources.rbegin(), kSources.rend());
  write_lines(dir / "tgt.de", targets);
  const std::string files =
      " --src " + (dir / "src.en").string() + " --tgt " + (dir / "tgt.de").string();
  const test::Run all = run_nmt("score --checkpoint " + (dir / "m.pt").string() + files, "", dir);
  ASSERT_EQ(all.code, 0) << all.err;
  std::vector<Example> examples;
  for (size_t i = 0; i < kSources.size(); ++i) {
    examples.push_back(
        {fixture_tokenizer().encode_src(kSources[i]), fixture_tokenizer().encode_tgt(targets[i])});
  }
  const auto expected = teacher_forced_scores(model, examples, 4096, at::kCPU);
  std::istringstream lines(all.out);
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    ASSERT_LT(count, expected.size());
    double sum = 0.0, mean = 0.0;
    long long tokens = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf\t%lf\t%lld", &sum, &mean, &tokens), 3) << line;
    EXPECT_NEAR(sum, expected[count].log_prob, 1e-4);
    EXPECT_NEAR(mean, expected[count].mean(), 1e-5);
    EXPECT_EQ(tokens, expected[count].tokens);
  }
  EXPECT_EQ(count, kSources.size());
  EXPECT_NE(all.err.find("scored 5 pairs"), std::string::npos) << all.err;

  const test::Run only =
      run_nmt("score --only mean --checkpoint " + (dir / "m.pt").string() + files, "", dir);
  ASSERT_EQ(only.code, 0) << only.err;
  std::istringstream means(only.out);
  count = 0;
  for (std::string line; std::getline(means, line); ++count) {
    EXPECT_EQ(line.find('\t'), std::string::npos);
    EXPECT_NEAR(std::stod(line), expected[count].mean(), 1e-5);
  }
  EXPECT_EQ(count, kSources.size());

  const test::Run bad =
      run_nmt("score --only max --checkpoint " + (dir / "m.pt").string() + files, "", dir);
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--only 'max' is not valid: choose one of sum, mean"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace nmt
