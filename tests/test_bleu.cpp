// Golden tests for sacreBLEU-compatible BLEU (src/eval/bleu.h).
//
// Where the numbers come from:
//  - "by hand": worked out from the definitions in the comment next to the test.
//  - "reference": scripts/reference_metrics.py, an independent stdlib-only Python implementation
//    (it runs the 13a regexes with Python's `re`), e.g.
//      /usr/bin/python3 scripts/reference_metrics.py hyp.txt ref.txt   -> bleu_score ...
//  - "sacreBLEU": expected values from sacreBLEU's own test suite (test/test_bleu.py,
//    test/test_sentence_bleu.py), for settings this implementation shares.
// The C++ and Python implementations also agreed on 300 random corpora (display strings and
// scores to 1e-9) and the 13a tokenizer on 9,000 random lines when this file was written.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/bleu.h"
#include "eval/unicode.h"
#include "test_util.h"

namespace nmt {
namespace {

constexpr double kTol = 1e-9;

// Tokenizer expectations: reference (Python `re` with sacreBLEU's four regexes).
TEST(Bleu, Tokenize13aSplitsPunctuationAndSymbols) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("(a) [b] {c} x/y a+b=c @home #1 50% a*b a|b a~b ^_^ `x` a;b:c?"),
            "( a ) [ b ] { c } x / y a + b = c @ home # 1 50 % a * b a | b a ~ b ^ _ ^ ` x ` "
            "a ; b : c ?");
  EXPECT_EQ(tokenize_13a("U.S.A. e.g., Dr. Smith"), "U . S . A . e . g . , Dr . Smith");
  EXPECT_EQ(tokenize_13a("..."), ". . .");
  EXPECT_EQ(tokenize_13a("--"), "--");  // '-' is not in the symbol class
}

TEST(Bleu, Tokenize13aKeepsNumbersTogether) {
  EXPECT_EQ(tokenize_13a("It costs $3.50, or 1,000.5 EUR."), "It costs $ 3.50 , or 1,000.5 EUR .");
  // A period/comma is split off unless a digit is on *both* sides; the padding space counts as
  // a non-digit neighbour, so a leading ".5" splits.
  EXPECT_EQ(tokenize_13a("3.5 1,000 .5 ,5 5. 5, a.b a,b"), "3.5 1,000 . 5 , 5 5 . 5 , a . b a , b");
  // A dash is split only after a digit.
  EXPECT_EQ(tokenize_13a("5-6 x-y 1990-era -5 a - b 1-"), "5 - 6 x-y 1990 - era -5 a - b 1 -");
  EXPECT_EQ(tokenize_13a("Mr. 5."), "Mr . 5 .");
}

TEST(Bleu, Tokenize13aKeepsApostrophesAndSplitsQuotes) {
  EXPECT_EQ(tokenize_13a("It's Tom's, isn't it?"), "It's Tom's , isn't it ?");
  EXPECT_EQ(tokenize_13a("He said \"hi\" 'there'"), "He said \" hi \" 'there'");
}

TEST(Bleu, Tokenize13aUnescapesOnlyFourEntitiesOnce) {
  EXPECT_EQ(tokenize_13a("&quot;hi&quot; &amp; &lt;b&gt; &amp;quot; &apos; AT&T"),
            "\" hi \" & < b > & quot ; & apos ; AT & T");
}

TEST(Bleu, Tokenize13aIsUtf8Safe) {
  EXPECT_EQ(tokenize_13a("Mädchen. Straße, Ärger! 日本語。 «ja»"),
            "Mädchen . Straße , Ärger ! 日本語。 «ja»");
  // Python's str.split() also splits at NBSP, THIN SPACE and IDEOGRAPHIC SPACE.
  EXPECT_EQ(tokenize_13a("a\u00a0b\u2009c\u3000d"), "a b c d");
}

TEST(Bleu, Tokenize13aPreprocessing) {
  EXPECT_EQ(tokenize_13a("<skipped>x <skipped>"), "x");
  EXPECT_EQ(tokenize_13a("a-\nb x\ny"), "ab x y");
  EXPECT_EQ(tokenize_13a("  many   spaces\tand\ttabs  "), "many spaces and tabs");
  EXPECT_EQ(tokenize_13a(""), "");
}

TEST(Bleu, LowercaseFollowsPythonStrLower) {
  // Python: "ΟΔΟΣ İ ÄÖÜ".lower() == "οδος i̇ äöü" (final sigma; İ -> i + U+0307).
  EXPECT_EQ(unicode_lower("ΟΔΟΣ İ ÄÖÜ"), "οδος i\u0307 äöü");
  // Invalid UTF-8 survives a round trip (surrogateescape) instead of being dropped.
  EXPECT_EQ(utf8_encode(utf8_decode("a\xff\xc3(b")), "a\xff\xc3(b");
}

TEST(Bleu, ExactMatchIs100) {
  const std::vector<std::string> text = {"The cat sat on the mat.", "It's 3.5 km, isn't it?"};
  const BleuScore bleu = corpus_bleu(text, text);
  EXPECT_NEAR(bleu.score, 100.0, kTol);
  EXPECT_DOUBLE_EQ(bleu.brevity_penalty, 1.0);
  EXPECT_EQ(bleu.hyp_len, 14);  // 7 + 7 tokens after 13a: "It's 3.5 km , isn't it ?"
}

TEST(Bleu, EmptyHypothesesScoreZero) {
  const BleuScore bleu = corpus_bleu({"", ""}, {"a b c d", "e f"});
  EXPECT_EQ(bleu.score, 0.0);
  EXPECT_EQ(bleu.brevity_penalty, 0.0);  // c = 0 < r = 6
  EXPECT_EQ(bleu.hyp_len, 0);
  EXPECT_EQ(bleu.ref_len, 6);
}

TEST(Bleu, NoMatchesScoreZeroNotSmoothed) {
  // sacreBLEU returns 0 outright when no n-gram matches at all (its issue #141), even though
  // "exp" smoothing alone would give precisions 50/25/12.5/6.25.
  const BleuScore bleu = corpus_bleu({"w x y z"}, {"a b c d"});
  EXPECT_EQ(bleu.score, 0.0);
  EXPECT_EQ(bleu.precisions[0], 0.0);
  EXPECT_EQ(bleu.totals[0], 4);
  EXPECT_EQ(sentence_bleu("this is a cat", "okay thanks"), 0.0);  // sacreBLEU: 0.0
}

TEST(Bleu, ExpSmoothingHalvesPerZeroMatchOrder) {
  // By hand: hyp "a b c d", ref "a b d c". Unigrams 4/4; bigrams ab|bc|cd vs ab|bd|dc: 1/3;
  // trigrams 0/2 -> first zero order: 100 / (2 * 2) = 25; 4-grams 0/1 -> 100 / (4 * 1) = 25.
  // BLEU = (100 * 100/3 * 25 * 25)^(1/4) = (6250000/3)^(1/4) = 37.99178428257963.
  const BleuScore bleu = corpus_bleu({"a b c d"}, {"a b d c"});
  EXPECT_NEAR(bleu.score, 37.99178428257963, kTol);
  EXPECT_NEAR(bleu.precisions[1], 100.0 / 3, kTol);
  EXPECT_DOUBLE_EQ(bleu.precisions[2], 25.0);
  EXPECT_DOUBLE_EQ(bleu.precisions[3], 25.0);
  EXPECT_EQ(bleu.counts, (std::array<long long, 4>{4, 1, 0, 0}));
  EXPECT_EQ(bleu.totals, (std::array<long long, 4>{4, 3, 2, 1}));
}

TEST(Bleu, MatchesAreClippedByReferenceCounts) {
  // Papineni et al. 2002 §2.1: "the" occurs twice in the reference, so at most two of the four
  // hypothesis "the" match: unigram precision 2/4, bigram "the the" 0/3 (by hand).
  const BleuScore bleu = corpus_bleu({"the the the the"}, {"the cat the mat"});
  EXPECT_EQ(bleu.counts[0], 2);
  EXPECT_EQ(bleu.totals[0], 4);
  EXPECT_DOUBLE_EQ(bleu.precisions[0], 50.0);
}

TEST(Bleu, BrevityPenalty) {
  // By hand: every n-gram of "the cat sat on" is in the reference (precisions 100), c = 4, r = 6:
  // BP = exp(1 - 6/4) = exp(-0.5), BLEU = 100 * exp(-0.5) = 60.65306597126334.
  const BleuScore bleu = corpus_bleu({"the cat sat on"}, {"the cat sat on the mat"});
  EXPECT_NEAR(bleu.brevity_penalty, 0.6065306597126334, kTol);
  EXPECT_NEAR(bleu.score, 60.65306597126334, kTol);
  // A longer hypothesis is not penalised by BP (only by precision).
  EXPECT_DOUBLE_EQ(corpus_bleu({"the cat sat on the mat"}, {"the cat sat on"}).brevity_penalty,
                   1.0);
}

TEST(Bleu, CorpusWithoutFourGramsScoresZeroButSentenceBleuDoesNot) {
  // Corpus BLEU uses all four orders (effective_order=False): no 4-grams means precision 0.
  EXPECT_EQ(corpus_bleu({"the cat sat"}, {"the cat sat"}).score, 0.0);
  // Sentence BLEU drops orders without hypothesis n-grams. By hand: orders 1..3 are 100 and
  // BP = exp(1 - 6/3), so 100 / e = 36.787944117144235.
  EXPECT_NEAR(sentence_bleu("the cat sat", "the cat sat on the mat"), 36.787944117144235, kTol);
  // sacreBLEU test_bleu.py (effective order): "test" vs "a test" -> 0.3678794411714425 * 100.
  EXPECT_NEAR(sentence_bleu("test", "a test"), 36.78794411714425, kTol);
  EXPECT_NEAR(sentence_bleu("a test", "a test"), 100.0, kTol);
}

TEST(Bleu, SentenceBleuMatchesSacrebleuIssue98) {
  // sacreBLEU test_sentence_bleu.py: exp smoothing, 13a, effective order -> 8.493 (+-1e-3);
  // reference: 8.493098745313148. Note ţ (U+0163) in the reference vs ț (U+021B).
  const double score =
      sentence_bleu("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
                    "producţia de zahăr brut se exprimă în zahăr alb;");
  EXPECT_NEAR(score, 8.493, 1e-3);
  EXPECT_NEAR(score, 8.493098745313148, kTol);
}

TEST(Bleu, MultiSentenceCorpusSumsStatisticsBeforeDividing) {
  // The sacreBLEU README example, scored against its first reference set only (reference).
  const std::vector<std::string> hyps = {"The dog bit the man.", "It wasn't surprising.",
                                         "The man had just bitten him."};
  const BleuScore bleu = corpus_bleu(
      hyps, {"The dog bit the man.", "It was not unexpected.", "The man bit him first."});
  EXPECT_NEAR(bleu.score, 45.06750632106114, kTol);
  EXPECT_EQ(bleu.counts, (std::array<long long, 4>{12, 6, 4, 3}));
  EXPECT_EQ(bleu.totals, (std::array<long long, 4>{17, 14, 11, 8}));
  // Against the second reference set: shorter hypotheses, so a brevity penalty (reference).
  const BleuScore second = corpus_bleu(
      hyps, {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."});
  EXPECT_NEAR(second.score, 28.330553664429278, kTol);
  EXPECT_NEAR(second.brevity_penalty, 0.8890097654027757, kTol);
  EXPECT_EQ(second.ref_len, 19);
}

TEST(Bleu, LowercaseOption) {
  const std::vector<std::string> hyp = {"THE Mädchen SAT ON THE MAT."};
  const std::vector<std::string> ref = {"the MÄDCHEN sat on the mat."};
  const BleuScore lower = corpus_bleu(hyp, ref, /*lowercase=*/true);
  EXPECT_NEAR(lower.score, 100.0, kTol);
  EXPECT_NE(lower.signature.find("case:lc"), std::string::npos);
  // Mixed case: only "." matches; exp smoothing gives precisions 100/7, 100/12, 100/20, 100/32
  // and BLEU 6.567274736060395 (reference).
  const BleuScore mixed = corpus_bleu(hyp, ref);
  EXPECT_NEAR(mixed.score, 6.567274736060395, kTol);
  EXPECT_NEAR(mixed.precisions[3], 3.125, kTol);
}

TEST(Bleu, TrailingWhitespaceAndEmptyReference) {
  EXPECT_NEAR(corpus_bleu({"a b c d \t "}, {"a b c d"}).score, 100.0, kTol);
  // sacreBLEU strips the line *before* 13a, so a trailing "-\n" is not a line-break hyphen.
  EXPECT_NEAR(corpus_bleu({"a b c d-\n"}, {"a b c d-"}).score, 100.0, kTol);
  // sacreBLEU refuses an empty reference; here it counts as zero reference tokens.
  const BleuScore bleu = corpus_bleu({"a b c d"}, {""});
  EXPECT_EQ(bleu.score, 0.0);
  EXPECT_EQ(bleu.ref_len, 0);
}

TEST(Bleu, ToStringAndSignatureLikeSacrebleu) {
  const BleuScore bleu = corpus_bleu({"the cat sat on"}, {"the cat sat on the mat"});
  EXPECT_EQ(bleu.to_string(),
            "BLEU = 60.65 100.0/100.0/100.0/100.0 (BP = 0.607 ratio = 0.667 hyp_len = 4 "
            "ref_len = 6)");
  EXPECT_EQ(corpus_bleu({"a b c d"}, {"a b d c"}).to_string(),
            "BLEU = 37.99 100.0/33.3/25.0/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)");
  EXPECT_EQ(bleu.signature, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-0.1");
}

TEST(Bleu, MismatchedSizesNameBothCounts) {
  test::expect_error(
      [] {
        corpus_bleu({"a", "b", "c"}, {"a", "b"});
      },
      "3 hypotheses but 2 references");
  test::expect_error([] { corpus_bleu({}, {"a"}); }, "0 hypotheses but 1 references");
}

}  // namespace
}  // namespace nmt
