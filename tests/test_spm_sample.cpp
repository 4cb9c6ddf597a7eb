// data/spm_sample.cpp: the sample SentencePiece trains on is bounded by data.spm_sentences
// (sentences per model: lines for separate models, half as many for a joint one),
// deterministic in data.seed, drawn from every corpus, and every line in order when it fits.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "corpus_test_util.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> trimmed(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    std::string t = trim_sentence(line);
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

TEST(SpmSample, EveryLineInCorpusOrderWhenTheCorporaFit) {
  const test::TempDir dir("spm_every");
  const DataConfig data = test::tiny_config(dir / "run").data;
  const fs::path fixtures = NMT_FIXTURES_DIR;
  const ParallelText text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const SpmSample sample = sample_spm_sentences(data);
  EXPECT_EQ(sample.lines, text.size());
  EXPECT_EQ(sample.sampled, text.size());
  EXPECT_EQ(sample.src, trimmed(text.src));
  EXPECT_EQ(sample.tgt, trimmed(text.tgt));
  // So the tokenizer is the one training on every line gives (as before sampling existed).
  bool trained = false;
  TokenizerReport report;
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run", &trained, &report);
  EXPECT_TRUE(trained);
  EXPECT_EQ(report.sampled, text.size());
  EXPECT_EQ(report.threads, 1);
  const Tokenizer every_line =
      Tokenizer::train(data, trimmed(text.src), trimmed(text.tgt), dir / "every_line");
  EXPECT_EQ(tokenizer.serialized(), every_line.serialized());
}

TEST(SpmSample, BoundedBySpmSentencesAndDeterministicInTheSeed) {
  const test::TempDir dir("spm_bounded");
  DataConfig data = test::tiny_config(dir / "run").data;
  data.spm_sentences = 100;
  ASSERT_TRUE(data.joint_vocab);
  // One joint model trains on both sides: 50 lines give it 100 sentences.
  const SpmSample sample = sample_spm_sentences(data);
  EXPECT_EQ(sample.lines, 400u);
  EXPECT_EQ(sample.sampled, 50u);
  EXPECT_EQ(sample.src.size(), 50u);
  EXPECT_EQ(sample.tgt.size(), 50u);
  // Separate models train on one side each: 100 lines, 100 sentences per model.
  data.joint_vocab = false;
  EXPECT_EQ(sample_spm_sentences(data).sampled, 100u);
  data.joint_vocab = true;
  const SpmSample again = sample_spm_sentences(data);
  EXPECT_EQ(again.src, sample.src);
  EXPECT_EQ(again.tgt, sample.tgt);
  data.seed = 2;
  EXPECT_NE(sample_spm_sentences(data).src, sample.src);
  // A sample of the corpus's lines, in corpus order, pairs kept together.
  const fs::path fixtures = NMT_FIXTURES_DIR;
  const ParallelText text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const auto src = trimmed(text.src), tgt = trimmed(text.tgt);
  size_t at = 0;
  for (size_t i = 0; i < sample.src.size(); ++i) {
    while (at < src.size() && src[at] != sample.src[i]) ++at;
    ASSERT_LT(at, src.size()) << sample.src[i];
    EXPECT_EQ(tgt[at], sample.tgt[i]);
  }
  bool trained = false;
  TokenizerReport report;
  data.seed = 1;
  prepare_tokenizer(data, dir / "run", &trained, &report);
  EXPECT_EQ(report.lines, 400u);
  EXPECT_EQ(report.sampled, 50u);
  EXPECT_EQ(report.sentences, 100u);
}

TEST(SpmSample, DrawsAcrossAllCorpora) {
  const test::TempDir dir("spm_corpora");
  const auto one = test::made_up_corpus(300);
  auto two = test::made_up_corpus(300, 1000);
  for (auto& line : two.src) line = "zz " + line;  // b's lines are told apart by their start
  test::write_lines_to(dir / "a.xx", one.src);
  test::write_lines_to(dir / "a.yy", one.tgt);
  test::write_lines_to(dir / "b.xx", two.src);
  test::write_lines_to(dir / "b.yy", std::vector<std::string>(two.tgt.size(), "  "));
  DataConfig data;
  data.src_lang = "xx";
  data.tgt_lang = "yy";
  data.train = {CorpusSpec::of_split("a"), CorpusSpec::of_split("b")};
  data.dir = dir.string();
  data.spm_sentences = 200;  // a joint model: 100 lines
  // b has no usable pair: an error naming it, as training on every line gave.
  test::expect_error([&] { sample_spm_sentences(data); }, "empty corpus: split 'b'");
  test::write_lines_to(dir / "b.yy", two.tgt);
  const SpmSample sample = sample_spm_sentences(data);
  EXPECT_EQ(sample.lines, 600u);
  EXPECT_EQ(sample.sampled, 100u);
  size_t from_one = 0;
  for (const auto& line : sample.src) from_one += line.compare(0, 3, "zz ") != 0;
  EXPECT_GT(from_one, 20u);
  EXPECT_LT(from_one, 80u);
}

TEST(SpmSample, TrainingThreadsFollowTheSentenceCountNotTheMachine) {
  EXPECT_EQ(spm_train_threads(0), 1);
  EXPECT_EQ(spm_train_threads(58000), 1);  // Multi30k, both sides: as before, one thread
  EXPECT_EQ(spm_train_threads(250000), 2);
  EXPECT_EQ(spm_train_threads(2000000), 16);
  EXPECT_EQ(spm_train_threads(100000000), 16);
}

}  // namespace
}  // namespace nmt
