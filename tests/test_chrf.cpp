// Golden tests for sacreBLEU-compatible chrF (src/eval/chrf.h): chrF2, character orders 1..6,
// whitespace removed, sacreBLEU 2.x's default "effective order" averaging (eps_smoothing=False).
//
// Where the numbers come from: "by hand" (worked in the comment), "reference"
// (scripts/reference_metrics.py, independent stdlib-only Python: chrf_score ...), or "sacreBLEU"
// (test/test_chrf.py, test_cases_effective_order: those were run with beta = 3, but each has
// precision == recall, where F-beta does not depend on beta).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/chrf.h"
#include "test_util.h"

namespace nmt {
namespace {

constexpr double kChrfTol = 1e-9;

double chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return corpus_chrf(hyps, refs).score;
}

TEST(Chrf, ExactMatchIs100) {
  EXPECT_NEAR(chrf({"Niemand hat die Absicht, eine Mauer zu errichten"},
                   {"Niemand hat die Absicht, eine Mauer zu errichten"}),
              100.0, kChrfTol);                      // also sacreBLEU's expectation
  EXPECT_NEAR(chrf({"a"}, {"a"}), 100.0, kChrfTol);  // one order only, but it is exact
}

TEST(Chrf, EffectiveOrderCasesFromSacrebleu) {
  EXPECT_NEAR(chrf({"a b c"}, {"a b c"}), 100.0, kChrfTol);
  EXPECT_NEAR(chrf({"a b c"}, {"abc"}), 100.0, kChrfTol);  // whitespace is removed
  EXPECT_EQ(chrf({""}, {"reference"}), 0.0);
  EXPECT_EQ(chrf({""}, {"c"}), 0.0);
  // By hand: unigrams {a,b} vs {a,c}: 1 of 2 both ways; the single-character segments have no
  // longer n-grams, so only order 1 counts: P = R = 1/2 -> 50.
  EXPECT_NEAR(chrf({"a", "b"}, {"a", "c"}), 50.0, kChrfTol);
  // By hand: order 1 {a,a} vs {a,b}: P = R = 1/2; order 2 "aa" vs "ab": P = R = 0;
  // averaged over the two orders: P = R = 1/4 -> 25.
  EXPECT_NEAR(chrf({"aa"}, {"ab"}), 25.0, kChrfTol);
}

TEST(Chrf, PartialMatchWeightsRecallTwiceByHand) {
  // hyp "ab", ref "abc": order 1 P = 2/2, R = 2/3; order 2 P = 1/1, R = 1/2; order 3 has no
  // hypothesis n-gram (not an effective order). avg P = 1, avg R = 7/12.
  // F2 = 5 P R / (4 P + R) = (35/12) / (55/12) = 7/11.
  EXPECT_NEAR(chrf({"ab"}, {"abc"}), 700.0 / 11, kChrfTol);
  // Swapped: avg P = (2/3 + 1/2) / 2 = 7/12, avg R = 1: F2 = (35/12) / (28/12 + 1) = 7/8.
  EXPECT_NEAR(chrf({"abc"}, {"ab"}), 87.5, kChrfTol);
}

TEST(Chrf, ReferenceWithoutNgramsOfAnOrderDropsThoseHypothesisNgrams) {
  // sacreBLEU's _get_match_statistics counts hypothesis n-grams only if the reference has
  // n-grams of that order. By hand: segments ("abc", "ab") and ("xyz", "xyz").
  // order 1: hyp 3+3, ref 2+3, match 2+3 -> P = 5/6, R = 1
  // order 2: hyp 2+2, ref 1+2, match 1+2 -> P = 3/4, R = 1
  // order 3: "abc" not counted (its reference has no 3-gram), "xyz" 1/1 -> P = 1, R = 1
  // avg P = 31/36, avg R = 1, F2 = (5 * 31/36) / (4 * 31/36 + 1) = 155/160 = 96.875.
  // (Counting "abc" would give P3 = 1/2 and F2 = 125/136 = 91.9.)
  const ChrfScore score = corpus_chrf({"abc", "xyz"}, {"ab", "xyz"});
  EXPECT_NEAR(score.score, 96.875, kChrfTol);
  EXPECT_EQ(score.to_string(), "chrF2 = 96.87");  // sacreBLEU's op order lands just below .875
}

TEST(Chrf, AllUnicodeWhitespaceIsRemoved) {
  EXPECT_NEAR(chrf({"a\tb\u00a0c \u3000d"}, {"abcd"}), 100.0, kChrfTol);
}

TEST(Chrf, CharactersAreCodePointsNotBytes) {
  // By hand: "äb" vs "ab": order 1 {ä,b} vs {a,b}: P = R = 1/2; order 2 "äb" vs "ab": 0.
  // P = R = 1/4 -> 25. (Counting the two bytes of "ä" separately would give something else.)
  EXPECT_NEAR(chrf({"äb"}, {"ab"}), 25.0, kChrfTol);
  EXPECT_NEAR(chrf({"Mädchen"}, {"Mädchen"}), 100.0, kChrfTol);
}

TEST(Chrf, LowercaseOption) {
  EXPECT_EQ(chrf({"ABC"}, {"abc"}), 0.0);
  const ChrfScore lower = corpus_chrf({"ÄBC"}, {"äbc"}, /*lowercase=*/true);
  EXPECT_NEAR(lower.score, 100.0, kChrfTol);
  EXPECT_EQ(lower.signature, "nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|version:nmt-0.1");
}

TEST(Chrf, MultiSentenceCorpus) {
  // The sacreBLEU README example against each of its reference sets (reference).
  const std::vector<std::string> hyps = {"The dog bit the man.", "It wasn't surprising.",
                                         "The man had just bitten him."};
  EXPECT_NEAR(
      chrf(hyps, {"The dog bit the man.", "It was not unexpected.", "The man bit him first."}),
      50.0430636065823, kChrfTol);
  EXPECT_NEAR(chrf(hyps, {"The dog had bit the man.", "No one was surprised.",
                          "The man had bitten the dog."}),
              51.70106133373036, kChrfTol);
  // Brevity: a prefix of the reference has full precision but low recall (reference).
  EXPECT_NEAR(chrf({"the cat sat on"}, {"the cat sat on the mat"}), 63.34974535203514, kChrfTol);
}

TEST(Chrf, EmptyCorpusAndEmptyHypotheses) {
  EXPECT_EQ(chrf({}, {}), 0.0);
  EXPECT_EQ(chrf({"", ""}, {"abc", "def"}), 0.0);
}

TEST(Chrf, ToStringAndSignature) {
  const ChrfScore score = corpus_chrf({"ab"}, {"abc"});
  EXPECT_EQ(score.to_string(), "chrF2 = 63.64");
  EXPECT_EQ(score.signature, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:nmt-0.1");
}

TEST(Chrf, MismatchedSizesNameBothCounts) {
  test::expect_error([] { corpus_chrf({"a"}, {"a", "b"}); }, "1 hypotheses but 2 references");
}

}  // namespace
}  // namespace nmt
