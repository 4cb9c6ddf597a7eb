// data/spm_sample.cpp: the sample SentencePiece trains on is bounded by data.spm_sentences
// (sentences per model: lines for separate models, half as many for a joint one) and by
// data.spm_characters (characters per model), deterministic in data.seed, drawn from every
// corpus, and every line in order when it fits.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config.h"
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

/// Unicode characters of UTF-8 `lines`, counted here by decoding (independently of nmt's count).
size_t characters(const std::vector<std::string>& lines) {
  size_t n = 0;
  for (const auto& line : lines) {
    for (size_t i = 0; i < line.size(); ++n) {
      const auto c = static_cast<unsigned char>(line[i]);
      i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    }
  }
  return n;
}

/// `sample`'s lines are lines of `corpus`, in its order, with their two sides together.
void expect_lines_of(const ParallelText& corpus, const SpmSample& sample) {
  const auto src = trimmed(corpus.src), tgt = trimmed(corpus.tgt);
  ASSERT_EQ(sample.src.size(), sample.tgt.size());
  size_t at = 0;
  for (size_t i = 0; i < sample.src.size(); ++i, ++at) {
    while (at < src.size() && src[at] != sample.src[i]) ++at;
    ASSERT_LT(at, src.size()) << sample.src[i];
    EXPECT_EQ(tgt[at], sample.tgt[i]);
  }
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
  expect_lines_of(read_parallel(fixtures / "tiny.en", fixtures / "tiny.de"), sample);
  bool trained = false;
  TokenizerReport report;
  data.seed = 1;
  prepare_tokenizer(data, dir / "run", &trained, &report);
  EXPECT_EQ(report.lines, 400u);
  EXPECT_EQ(report.sampled, 50u);
  EXPECT_EQ(report.sentences, 100u);
}

TEST(SpmSample, BoundedByCharactersAsWellAsSentences) {
  // SentencePiece's memory grows with the characters it trains on (docs/scaling.md), so long
  // lines must not fill the sentence bound: data.spm_characters bounds each model's characters.
  const test::TempDir dir("spm_characters");
  Config config = test::tiny_config(dir / "run");
  EXPECT_NO_THROW(apply_overrides(config, {"data.spm_characters=4000"}));
  DataConfig& data = config.data;
  ASSERT_TRUE(data.joint_vocab);
  const fs::path fixtures = NMT_FIXTURES_DIR;
  const ParallelText text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  size_t longest = 0;  // the characters of the longest line, both sides
  for (size_t i = 0; i < text.size(); ++i)
    longest =
        std::max(longest, characters({trim_sentence(text.src[i]), trim_sentence(text.tgt[i])}));
  // One joint model: both sides of its lines count, up to the bound and no further.
  const SpmSample sample = sample_spm_sentences(data);
  const size_t joint = characters(sample.src) + characters(sample.tgt);
  EXPECT_EQ(sample.lines, 400u);
  EXPECT_LE(joint, 4000u);
  EXPECT_GT(joint + longest, 4000u);
  EXPECT_EQ(sample.sampled, sample.src.size());
  expect_lines_of(text, sample);
  const SpmSample again = sample_spm_sentences(data);
  EXPECT_EQ(again.src, sample.src);
  EXPECT_EQ(again.tgt, sample.tgt);
  data.seed = 2;
  EXPECT_NE(sample_spm_sentences(data).src, sample.src);
  // Separate models: each side up to the bound, so about twice the lines.
  data.seed = 1;
  data.joint_vocab = false;
  const SpmSample separate = sample_spm_sentences(data);
  EXPECT_LE(characters(separate.src), 4000u);
  EXPECT_LE(characters(separate.tgt), 4000u);
  EXPECT_GT(std::max(characters(separate.src), characters(separate.tgt)) + longest, 4000u);
  EXPECT_GT(separate.sampled, sample.sampled);
  expect_lines_of(text, separate);
  // What nmt prepare reports: the sentences and characters of the (larger) model.
  EXPECT_EQ(separate.sentences, separate.sampled);
  EXPECT_EQ(separate.characters, std::max(characters(separate.src), characters(separate.tgt)));
  data.joint_vocab = true;
  bool trained = false;
  TokenizerReport report;
  prepare_tokenizer(data, dir / "run", &trained, &report);
  EXPECT_EQ(report.sampled, sample.sampled);
  EXPECT_EQ(report.sentences, 2 * sample.sampled);
  EXPECT_EQ(report.characters, joint);
  // A bound below the line drawn first leaves SentencePiece nothing: an error naming the key.
  data.spm_characters = 10;
  test::expect_error([&] { sample_spm_sentences(data); },
                     "data.spm_characters = 10 leaves SentencePiece no sentence: the first line "
                     "drawn has ");
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
