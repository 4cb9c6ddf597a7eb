// text/document.h: inputs cut into segments and put back together, with stand-in translations
// (no model): whitespace, blank lines, casing, chunking, errors and HTML tags.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/document.h"

namespace nmt {
namespace {

size_t word_count(const std::string& text) { return text_words(text, {0, text.size()}).size(); }

/// Each segment "translated" as "<" + its text + ">".
std::vector<TranslationResult> bracketed(const TextPlan& plan) {
  std::vector<TranslationResult> results;
  for (const auto& segment : plan.segments()) {
    TranslationResult result;
    result.nbest.push_back({"<" + segment + ">", -1.0, {7}});
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<std::string> texts(const std::vector<TranslationResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.best());
  return out;
}

TEST(Document, AParagraphIsTranslatedSentenceBySentenceAndJoinedWithItsOwnWhitespace) {
  const std::vector<std::string> inputs = {" A dog runs.  A cat sleeps.\tBirds fly.", "", "Hi"};
  const TextPlan plan(inputs, TextOptions{}, word_count);
  EXPECT_EQ(plan.segments(),
            (std::vector<std::string>{"A dog runs.", "A cat sleeps.", "Birds fly.", "Hi"}));
  EXPECT_EQ(plan.input_of(2), 0u);
  EXPECT_EQ(plan.input_of(3), 2u);
  const auto results = plan.assemble(bracketed(plan), nullptr);
  EXPECT_EQ(texts(results), (std::vector<std::string>{
                                " <A dog runs.>  <A cat sleeps.>\t<Birds fly.>", "", "<Hi>"}));
  EXPECT_DOUBLE_EQ(results[0].nbest[0].score, -3.0);  // the segments' scores add up
  EXPECT_EQ(results[0].nbest[0].tokens, (std::vector<int64_t>{7, 7, 7}));
  // --split none: the line is one segment.
  TextOptions whole;
  whole.split = SplitMode::kNone;
  EXPECT_EQ(TextPlan(inputs, whole, word_count).segments().size(), 2u);
}

TEST(Document, ATooLongSentenceIsTranslatedInPartsWithAWarningAndNothingIsCut) {
  TextOptions options;
  options.max_pieces = 3;
  const TextPlan plan({"one two, three four five six seven"}, options, word_count, 5);
  EXPECT_EQ(plan.segments(),
            (std::vector<std::string>{"one two,", "three four five", "six seven"}));
  const auto results = plan.assemble(bracketed(plan), nullptr);
  EXPECT_EQ(results[0].best(), "<one two,> <three four five> <six seven>");
  ASSERT_TRUE(results[0].warning.has_value());
  EXPECT_NE(results[0].warning->find("line 5: a sentence of 7 source pieces"), std::string::npos)
      << *results[0].warning;
}

TEST(Document, AllCapsIsTranslatedInSentenceCaseAndUpperCasedAgain) {
  TextOptions options;
  options.tgt_lang = "de";
  // (ICU's suppressions alone would not end a sentence at "STREET. A".)
  const TextPlan plan({"A DOG RUNS ON THE STREET. A Big Brown Dog Runs Home."}, options,
                      word_count);
  EXPECT_EQ(plan.segments(),
            (std::vector<std::string>{"A dog runs on the street.", "A big brown dog runs home."}));
  std::vector<TranslationResult> results(2);
  results[0].nbest.push_back({"Ein Hund läuft auf der Straße.", 0.0, {}});
  results[1].nbest.push_back({"Ein großer Hund läuft heim.", 0.0, {}});
  EXPECT_EQ(plan.assemble(results, nullptr)[0].best(),
            "EIN HUND LÄUFT AUF DER STRASSE. Ein großer Hund läuft heim.");
  options.casing = CasingMode::kNone;
  EXPECT_EQ(TextPlan({"A DOG RUNS."}, options, word_count).segments()[0], "A DOG RUNS.");
}

TEST(Document, TheModelsWordCasingEndsRunOnSentencesAndTrueCasesShouting) {
  std::vector<std::string> sources(WordCasing::kMinStarts, "A dog sees an Asian man.");
  TextOptions options;
  options.words = std::make_shared<const WordCasing>(WordCasing::learn(sources, "en"));
  const std::vector<std::string> inputs = {"A child swims in the water A man waits.",
                                           "AN ASIAN MAN WAITS."};
  const TextPlan plan(inputs, options, word_count);
  EXPECT_EQ(plan.segments(), (std::vector<std::string>{"A child swims in the water", "A man waits.",
                                                       "An Asian man waits."}));
  EXPECT_EQ(plan.assemble(bracketed(plan), nullptr)[0].best(),
            "<A child swims in the water> <A man waits.>");
  // Capitals mark no boundary in Title Case, translated as written or not.
  options.casing = CasingMode::kNone;
  EXPECT_EQ(
      TextPlan({"A Child Swims In The Water A Man Waits"}, options, word_count).segments().size(),
      1u);
  // --split none keeps a line whole, run-on or not.
  options.split = SplitMode::kNone;
  EXPECT_EQ(TextPlan(inputs, options, word_count).segments().front(), inputs.front());
}

TEST(Document, BadUtf8FailsItsLineAndAFailedOrInterruptedSegmentItsInput) {
  const TextPlan plan({"One. Two.", "bad \xff", "Next."}, TextOptions{}, word_count, 10);
  ASSERT_EQ(plan.segments().size(), 3u);
  auto results = bracketed(plan);
  results[1].nbest.clear();
  results[1].interrupted = true;
  const auto out = plan.assemble(results, nullptr);
  EXPECT_TRUE(out[0].interrupted);
  ASSERT_TRUE(out[1].error.has_value());
  EXPECT_NE(out[1].error->find("line 11: invalid UTF-8 at byte 5"), std::string::npos);
  EXPECT_EQ(out[2].best(), "<Next.>");
}

TEST(Document, HtmlBlocksAreSegmentsAndTagsFollowTheAlignment) {
  TextOptions options;
  options.format = TextFormat::kHtml;
  const TextPlan plan({"<h1>Dogs</h1>\n<p>A <b>red</b> car. It <i>runs</i>.</p>"}, options,
                      word_count);
  EXPECT_EQ(plan.segments(), (std::vector<std::string>{"Dogs", "A red car.", "It runs."}));
  EXPECT_FALSE(plan.needs_alignment(0));
  EXPECT_TRUE(plan.needs_alignment(1));
  std::vector<TranslationResult> results(3);
  results[0].nbest.push_back({"Hunde", 0.0, {5}});
  results[1].nbest.push_back({"Ein Auto rot.", 0.0, {5}});
  results[2].nbest.push_back({"Es rennt.", 0.0, {5}});
  int aligned = 0;
  const auto out = plan.assemble(results, [&](const std::string& source, const TranslatedText&) {
    ++aligned;
    WordLinks links;
    links.src_words = text_words(source, {0, source.size()});
    links.tgt_words = links.src_words;  // the counts matter, not the spans
    links.links = source == "A red car."
                      ? std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 2}, {2, 1}}
                      : std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 1}};
    return links;
  });
  EXPECT_EQ(aligned, 2);
  EXPECT_EQ(out[0].best(), "<h1>Hunde</h1>\n<p>Ein Auto <b>rot</b>. Es <i>rennt</i>.</p>");
}

TEST(Document, MalformedHtmlIsAWarningNotAFailure) {
  TextOptions options;
  options.format = TextFormat::kHtml;
  const TextPlan plan({"<p>one <b>two</p>"}, options, word_count, 3);
  const auto out = plan.assemble(bracketed(plan), nullptr);
  ASSERT_TRUE(out[0].ok());
  ASSERT_TRUE(out[0].warning.has_value());
  EXPECT_NE(out[0].warning->find("line 3: malformed HTML"), std::string::npos) << *out[0].warning;
  EXPECT_EQ(out[0].best(), "<p>&lt;one <b>two&gt;</b></p>");
}

}  // namespace
}  // namespace nmt
