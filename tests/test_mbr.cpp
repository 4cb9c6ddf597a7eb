// decode/mbr.cpp: expected utilities against pseudo-references.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "decode/mbr.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

TEST(Mbr, ReferencesWithWeightsGeneraliseTheNbestForm) {
  const std::vector<std::string> texts = {"ein Mann fährt Rad .", "ein Hund läuft .",
                                          "ein Mann fährt ein Rad ."};
  const std::vector<double> log_probs = {-1.0, -2.0, -0.5};
  std::vector<double> weights;
  double total = 0.0;
  for (const double lp : log_probs) weights.push_back(std::exp(lp)), total += std::exp(lp);
  for (double& w : weights) w /= total;
  for (const std::string metric : {"bleu", "chrf"}) {
    const auto nbest =
        mbr_expected_utilities(texts, log_probs, require_choice<MbrMetric>("metric", metric));
    const auto general =
        mbr_expected_utilities(texts, texts, weights, require_choice<MbrMetric>("metric", metric));
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_NEAR(nbest[i], general[i], 1e-9);
    // One reference of weight 1: the utility against it.
    const auto single = mbr_expected_utilities(texts, {texts[0]}, {1.0},
                                               require_choice<MbrMetric>("metric", metric));
    EXPECT_NEAR(single[0], 100.0, 1e-9);
    EXPECT_LT(single[1], single[2]);
  }
  test::expect_error(
      [&] {
        mbr_expected_utilities(texts, texts, {0.5, 0.5}, MbrMetric::kBleu);
      },
      "MBR: 3 pseudo-references but 2 weights");
  test::expect_error(
      [&] {
        mbr_expected_utilities(texts, texts, {0.5, 0.5, 0.5}, MbrMetric::kBleu);
      },
      "MBR: the weights sum to 1.500000, not 1");
  test::expect_error(
      [&] {
        mbr_expected_utilities(texts, texts, {1.5, -0.5, 0.0}, MbrMetric::kChrf);
      },
      "MBR: weight -0.500000 is not >= 0");
}

TEST(Mbr, ConsensusWinsUnlessTheModelIsSureOfAnOutlier) {
  const std::vector<std::string> texts = {
      "ein Mann fährt ein rotes Fahrrad .", "ein Hund spielt im Schnee .",
      "ein Mann fährt ein rotes Rad .", "ein Mann fährt ein Fahrrad ."};
  for (const std::string metric : {"bleu", "chrf"}) {
    // Equal probabilities: the candidate closest to the others wins, the outlier loses.
    const auto even = mbr_expected_utilities(texts, {-1.0, -1.0, -1.0, -1.0},
                                             require_choice<MbrMetric>("metric", metric));
    EXPECT_EQ(std::max_element(even.begin(), even.end()) - even.begin(), 0) << metric;
    EXPECT_EQ(std::min_element(even.begin(), even.end()) - even.begin(), 1) << metric;
    // A model all but certain of the outlier: utilities follow it (u(h, h) is the maximum).
    const auto sure = mbr_expected_utilities(texts, {-60.0, 0.0, -60.0, -60.0},
                                             require_choice<MbrMetric>("metric", metric));
    EXPECT_EQ(std::max_element(sure.begin(), sure.end()) - sure.begin(), 1) << metric;
    EXPECT_NEAR(sure[1], 100.0, 1e-6) << metric;
    // Softmax is shift-invariant: huge log-probabilities do not overflow.
    EXPECT_EQ(mbr_expected_utilities(texts, {-1e4 - 1, -1e4 - 1, -1e4 - 1, -1e4 - 1},
                                     require_choice<MbrMetric>("metric", metric)),
              even);
  }
  EXPECT_NEAR(sentence_chrf(texts[0], texts[2]), corpus_chrf({texts[0]}, {texts[2]}).score, 1e-9);
  test::expect_error([&] { mbr_expected_utilities(texts, {0.0}, MbrMetric::kBleu); },
                     "4 candidates but 1");
  test::expect_error(
      [&] {
        mbr_expected_utilities(texts, {0, 0, 0, 0}, require_choice<MbrMetric>("MBR metric", "ter"));
      },
      "MBR metric 'ter' is not valid: choose one of bleu, chrf");
}
}  // namespace
}  // namespace nmt
