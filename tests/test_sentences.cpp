// text/sentences.h: ICU's sentence splitting with its abbreviation suppressions.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/sentences.h"

namespace nmt {
namespace {

std::vector<std::string> sentences_of(const std::string& text, const std::string& lang = "en") {
  std::vector<std::string> out;
  for (const auto& span : split_sentences(text, lang))
    out.push_back(text.substr(span.begin, span.size()));
  return out;
}

TEST(Sentences, AParagraphSplitsAtSentenceEndsWithoutTheWhitespace) {
  const std::string text = "  A dog runs on the beach.  Two men talk!\tIs it raining? ";
  EXPECT_EQ(sentences_of(text), (std::vector<std::string>{"A dog runs on the beach.",
                                                          "Two men talk!", "Is it raining?"}));
  // The spans point into the text: what lies between them is its own whitespace.
  const auto spans = split_sentences(text, "en");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(text.substr(0, spans[0].begin), "  ");
  EXPECT_EQ(text.substr(spans[0].end, spans[1].begin - spans[0].end), "  ");
  EXPECT_EQ(text.substr(spans[1].end, spans[2].begin - spans[1].end), "\t");
  EXPECT_EQ(text.substr(spans[2].end), " ");
}

TEST(Sentences, AbbreviationsThatIcuKnowsDoNotEndASentence) {
  EXPECT_EQ(sentences_of("Mr. Smith walks his dog. He waves."),
            (std::vector<std::string>{"Mr. Smith walks his dog.", "He waves."}));
  EXPECT_EQ(sentences_of("Er wohnt in der Str. nebenan. Sie nicht.", "de").size(), 2u);
}

TEST(Sentences, AShoutedWordWithAFullStopEndsASentence) {
  // ICU's suppressions alone keep "FAST. The" together; "Mr." still does not end a sentence.
  EXPECT_EQ(sentences_of("THE DOG RUNS FAST. The man walks. HE IS SINGING. HE SITS."),
            (std::vector<std::string>{"THE DOG RUNS FAST.", "The man walks.", "HE IS SINGING.",
                                      "HE SITS."}));
  EXPECT_EQ(sentences_of("Mr. Smith walks. HE IS SINGING."),
            (std::vector<std::string>{"Mr. Smith walks.", "HE IS SINGING."}));
}

TEST(Sentences, ChatWithoutFullStopsIsOneSentenceAndBlankTextNone) {
  EXPECT_EQ(sentences_of("hey how are you doing today"),
            (std::vector<std::string>{"hey how are you doing today"}));
  EXPECT_TRUE(sentences_of(" \t ").empty());
  EXPECT_TRUE(sentences_of("").empty());
  // An unknown language falls back to ICU's root rules.
  EXPECT_EQ(sentences_of("One. Two.", "xx").size(), 2u);
}

TEST(Sentences, WordsAreRunsOfNonSpaceCodePoints) {
  const std::string text = "a\u00A0bc  d\u3000e";  // NBSP and the ideographic space separate
  const auto words = text_words(text, {0, text.size()});
  ASSERT_EQ(words.size(), 4u);
  EXPECT_EQ(text.substr(words[1].begin, words[1].size()), "bc");
  EXPECT_EQ(text.substr(words[3].begin, words[3].size()), "e");
}

}  // namespace
}  // namespace nmt
