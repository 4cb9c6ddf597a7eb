// data/word_casing.h: what training sources say about casing (usual forms, sentence starters),
// text/sentences.h split_run_ons and text/casing.h sentence_case, which use it, and how it
// travels: the run directory's file and the checkpoint.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data/dataset.h"
#include "data/word_casing.h"
#include "test_util.h"
#include "text/casing.h"
#include "text/sentences.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

/// Captions as Multi30k writes them: "A"/"Two" begin sentences, "Asian" is capitalised inside
/// them, "Dogs" begins sentences and appears capitalised inside one too often to mark a start.
std::vector<std::string> captions() {
  std::vector<std::string> out;
  for (int i = 0; i < 30; ++i) {
    out.push_back("A dog runs past an Asian man.");
    out.push_back("Two men (in red) watch the water, and Dogs barks.");
    out.push_back("Dogs play in the snow.");
  }
  out.push_back("Few people swim. Then they rest.");  // "Then": after a full stop, a start
  return out;
}

std::vector<std::string> parts_of(const std::string& text, const WordCasing& words) {
  std::vector<std::string> out;
  for (const auto& span : split_run_ons(text, {0, text.size()}, words))
    out.push_back(text.substr(span.begin, span.size()));
  return out;
}

TEST(WordCasing, LearnsUsualFormsAndSentenceStarters) {
  const auto casing = WordCasing::learn(captions(), "en");
  EXPECT_EQ(casing.starter_list(), (std::vector<std::string>{"A", "Two"}));
  ASSERT_NE(casing.usual_form("asian"), nullptr);
  EXPECT_EQ(*casing.usual_form("asian"), "Asian");
  EXPECT_EQ(*casing.usual_form("dogs"), "Dogs");  // 30 "Dogs" inside against no "dogs"
  EXPECT_EQ(casing.usual_form("men"), nullptr);   // lower case: nothing to store
  EXPECT_EQ(casing.usual_form("then"), nullptr);  // only ever after a full stop
  // Below kMinStarts sentences a word is no starter, however it is written elsewhere.
  const std::vector<std::string> few(WordCasing::kMinStarts - 1, "Some birds fly.");
  EXPECT_EQ(WordCasing::learn(few, "en").starters(), 0u);
}

TEST(WordCasing, WritesAndReadsItsJsonAndNamesWhatIsWrong) {
  const auto casing = WordCasing::learn(captions(), "en");
  const auto back = WordCasing::from_json(casing.to_json(), "here");
  EXPECT_EQ(back.to_json(), casing.to_json());
  EXPECT_EQ(back.lang(), "en");
  test::expect_error(
      [] {
        WordCasing::from_json({{"forms", 3}}, "model.pt: word_casing");
      },
      "model.pt: word_casing: not a word casing record");
  const auto dir = test::temp_dir("word_casing");
  std::ofstream(dir / "bad.json") << "{not json";
  test::expect_error([&] { WordCasing::read(dir / "bad.json"); }, "bad.json: not JSON");
}

TEST(WordCasing, RunOnSentencesAreCutBeforeAStarterAfterAnUnpunctuatedWord) {
  const auto words = WordCasing::learn(captions(), "en");
  EXPECT_EQ(parts_of("A child splashes in the water Two men talk in a city.", words),
            (std::vector<std::string>{"A child splashes in the water", "Two men talk in a city."}));
  EXPECT_EQ(parts_of("One man sits A dog runs there Two birds fly", words),
            (std::vector<std::string>{"One man sits", "A dog runs there", "Two birds fly"}));
  // A capital the sources write that way is no name: "Two Asian men" begins a sentence.
  EXPECT_EQ(parts_of("A child splashes in the water Two Asian men talk.", words).size(), 2u);
  // Not after punctuation, nor before a word that is not a starter or is not a plain word,
  // nor with fewer than kRunOnMinBefore words before or kRunOnMinAfter after, nor inside a name
  // (a capital the sources do not write before or after the starter).
  for (const std::string text :
       {"A child splashes in the water, Two men talk.", "A child splashes in the water Dogs bark.",
        "A child splashes in the water (Two men talk.)", "The water A dog runs.",
        "A child splashes in the water Two", "A woman holds a check for Two Food Bank.",
        "A child protests against PM Two Services."}) {
    EXPECT_EQ(parts_of(text, words), (std::vector<std::string>{text})) << text;
  }
  EXPECT_EQ(parts_of("A child splashes in the water Two men talk.", WordCasing{}).size(), 1u);
}

TEST(WordCasing, ShoutedTextIsTrueCasedByUsualForms) {
  const auto words = WordCasing::learn(captions(), "en");
  EXPECT_EQ(sentence_case("AN ASIAN MAN WALKS (WITH DOGS).", "en", true, &words),
            "An Asian man walks (with Dogs).");
  EXPECT_EQ(sentence_case("AN ASIAN MAN", "en", false, &words), "an Asian man");
  EXPECT_EQ(sentence_case("AN ASIAN MAN", "en"), "An asian man");  // without: sentence case
}

TEST(WordCasing, TheRunDirectoryAndEveryCheckpointKeepIt) {
  const auto dir = test::temp_dir("word_casing_run");
  Config config = test::tiny_config(dir / "run");
  config.train.max_steps = 2;
  test::train(config);
  const auto file = dir / "run" / kWordCasingFile;
  ASSERT_TRUE(std::filesystem::exists(file));
  LoadedModel loaded = load_checkpoint(dir / "run" / "last.pt", at::kCPU);
  ASSERT_TRUE(loaded.tokenizer.word_casing());
  EXPECT_EQ(loaded.tokenizer.word_casing()->to_json(), WordCasing::read(file).to_json());
  // A checkpoint saved with another casing carries it, whatever the run directory holds.
  loaded.tokenizer.set_word_casing(WordCasing::learn(captions(), "en"));
  save_checkpoint(dir / "run" / "other.pt", loaded.config, loaded.model, loaded.tokenizer, {});
  EXPECT_EQ(load_checkpoint(dir / "run" / "other.pt", at::kCPU).tokenizer.word_casing()->starters(),
            2u);
  // An older checkpoint, without the record, takes its directory's file.
  prepare_tokenizer(config.data, dir / "plain");
  std::filesystem::remove(dir / "plain" / kWordCasingFile);
  const Tokenizer plain = Tokenizer::load(Tokenizer::model_files(config.data, dir / "plain"));
  EXPECT_FALSE(plain.word_casing());
  std::filesystem::create_directories(dir / "old");
  save_checkpoint(dir / "old" / "last.pt", loaded.config, loaded.model, plain, {});
  EXPECT_FALSE(load_checkpoint(dir / "old" / "last.pt", at::kCPU).tokenizer.word_casing());
  std::ofstream(dir / "old" / kWordCasingFile) << WordCasing::learn(captions(), "en").to_json();
  EXPECT_EQ(load_checkpoint(dir / "old" / "last.pt", at::kCPU).tokenizer.word_casing()->starters(),
            2u);
}

}  // namespace
}  // namespace nmt
