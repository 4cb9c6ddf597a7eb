// decode/beam_search.cpp: when beam search may stop a sentence before `beam` hypotheses finish
// (decode.early_stopping). Scripted next-token log-probabilities build the case that decides it:
// a hypothesis that finishes early, and a longer one that overtakes it only because the length
// penalty rewards length. Exact search must keep searching for it; early stopping gives it up.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "core/special_ids.h"
#include "decode/search.h"
#include "decode/search_internal.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

// Six tokens: pad, unk, bos, eos and two words (unk is a valid output, as in real vocabularies).
constexpr int64_t kScriptVocab = 6;
constexpr int64_t kA = 4, kB = 5;
constexpr double kNever = -std::numeric_limits<double>::infinity();

/// The beam search step function of a model given per prefix: pad and bos set to -inf (as the
/// real search does); `calls` counts the steps.
detail::NextLogProbs scripted_steps(const PrefixLogProbs& next, int64_t& calls) {
  return [&next, &calls](const detail::LiveBeams& live) {
    ++calls;
    std::vector<at::Tensor> rows;
    for (const auto& prefix : live.tokens) {
      auto row = next(prefix).to(at::kFloat).clone();  // [vocab]
      row[kPadId] = kNever;
      row[kBosId] = kNever;
      rows.push_back(row);
    }
    return at::stack(rows);  // [rows, vocab]
  };
}

/// Log-probs written out per prefix, `otherwise` for prefixes not listed. Entries are [unk, eos,
/// a, b]; pad and bos are never produced. Not normalised: the search only needs them <= 0.
PrefixLogProbs script(std::map<std::vector<int64_t>, std::vector<double>> table,
                      std::vector<double> otherwise) {
  return [table, otherwise](const std::vector<int64_t>& prefix) {
    const auto it = table.find(prefix);
    const auto& v = it == table.end() ? otherwise : it->second;
    return at::tensor(std::vector<double>{kNever, v[0], kNever, v[1], v[2], v[3]}, at::kDouble);
  };
}

/// Eos first (log-prob -1, score -1 at any α: its penalty is lp(1) = 1), or "a a a" then eos
/// (log-prob -2.03, length 4): at α 2 that scores -2.03 / 1.5² = -0.90 and wins; at α 0 it
/// loses. After the first step the live "a" (-2) at its current length bounds to -2 / lp(2) =
/// -1.47 < -1: the current-length bound stops there, the bound over lengths up to the limit
/// (-2 / lp(limit + 1) = -0.5 at limit 6) does not. No tied candidates, so the order is fixed.
PrefixLogProbs late_winner_script() {
  return script({{{}, {-9.0, -1.0, -2.0, -8.0}},
                 {{kA}, {-5.5, -6.0, -0.01, -5.0}},
                 {{kA, kA}, {-5.5, -6.0, -0.01, -5.0}},
                 {{kA, kA, kA}, {-5.5, -0.01, -7.0, -5.0}}},
                {-7.5, -7.0, -6.5, -6.0});
}

/// One sentence searched over a scripted model: its n-best and the steps the search took.
struct Searched {
  std::vector<Hypothesis> nbest;
  int64_t steps = 0;
};

Searched search_script(const PrefixLogProbs& next, const DecodeConfig& config, int64_t limit = 6) {
  Searched searched;
  searched.nbest =
      detail::beam_search_steps({limit}, config, scripted_steps(next, searched.steps))[0];
  return searched;
}

DecodeConfig stopping_config(int64_t beam, int64_t nbest, double alpha, bool early) {
  DecodeConfig config = decode_config(beam, nbest);
  config.length_penalty = alpha;
  config.early_stopping = early;
  return config;
}

TEST(BeamStopping, ExactSearchKeepsSearchingForALongerHypothesisThePenaltyFavours) {
  const auto next = late_winner_script();
  const auto [best, steps] = search_script(next, stopping_config(2, 1, 2.0, false));
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].tokens, (std::vector<int64_t>{kA, kA, kA}));
  EXPECT_NEAR(best[0].log_prob, -2.03, 1e-5);
  EXPECT_NEAR(best[0].score, -2.03 / std::pow(9.0 / 6.0, 2.0), 1e-5);
  EXPECT_EQ(steps, 4);  // "a a a" ends with eos at the fourth step
  // The case bites: after step one, the current-length bound says stop.
  EXPECT_LT(-2.0 / gnmt_length_penalty(2, 2.0), -1.0);
}

TEST(BeamStopping, EarlyStoppingGivesUpOnceTheCurrentLengthCannotWin) {
  const auto next = late_winner_script();
  const auto [best, steps] = search_script(next, stopping_config(2, 1, 2.0, true));
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].tokens.empty());
  EXPECT_NEAR(best[0].score, -1.0, 1e-6);
  EXPECT_EQ(steps, 1);
}

TEST(BeamStopping, WithoutALengthRewardBothStopAtOnceAndAgree) {
  // α 0: every penalty is 1, so both bounds are the live log-prob (-2 < -1): stop after step 1.
  const auto next = late_winner_script();
  for (const bool early : {false, true}) {
    const auto [best, steps] = search_script(next, stopping_config(2, 1, 0.0, early));
    EXPECT_TRUE(best[0].tokens.empty()) << "early_stopping " << early;
    EXPECT_EQ(steps, 1) << "early_stopping " << early;
  }
}

TEST(BeamStopping, ExactSearchStopsOnceNoLengthUpToTheLimitCanWin) {
  // Eos first at -0.1; the live "a" at -5 could reach at best -5 / lp(limit + 1) = -2.5 (α 1,
  // limit 6): stop after one step instead of searching to the limit.
  const auto next = script({{{}, {-9.0, -0.1, -5.0, -8.0}}}, {-7.5, -7.0, -0.01, -6.0});
  const auto [best, steps] = search_script(next, stopping_config(2, 1, 1.0, false));
  EXPECT_TRUE(best[0].tokens.empty());
  EXPECT_EQ(steps, 1);
}

TEST(BeamStopping, NbestWaitsForItsLastHypothesis) {
  // nbest 2: after step one only eos has finished, so the search goes on (whatever the bound)
  // until a second hypothesis finishes: "a a a" at step 4, better than eos at α 2.
  const auto next = late_winner_script();
  for (const bool early : {false, true}) {
    const auto [nbest, steps] = search_script(next, stopping_config(3, 2, 2.0, early));
    ASSERT_EQ(nbest.size(), 2u) << "early_stopping " << early;
    EXPECT_EQ(nbest[0].tokens, (std::vector<int64_t>{kA, kA, kA})) << "early_stopping " << early;
    EXPECT_TRUE(nbest[1].tokens.empty()) << "early_stopping " << early;
  }
}

/// A scripted model with seeded random log-probs over unk, a, b and eos (logits uniform in
/// [-2, 2) before the shaping), like a
/// translation model: at the first step eos and "a" are both likely (eos by a margin that grows
/// with the seed), after that one token dominates each step (a random word, then eos once the
/// output has 2 + seed % 3 tokens). So a short output finishes first and a longer one, less
/// probable, can win once the length penalty rewards its length: the case that decides when
/// the search may stop.
PrefixLogProbs random_script(uint64_t seed) {
  return [seed](const std::vector<int64_t>& prefix) {
    uint64_t key = seed;
    for (const int64_t token : prefix) key = key * 1000003u + static_cast<uint64_t>(token);
    std::mt19937_64 rng(key);  // the same numbers with every standard library
    std::vector<double> logits(kScriptVocab);
    for (auto& logit : logits) logit = 4.0 * static_cast<double>(rng() >> 11) * 0x1.0p-53 - 2.0;
    if (prefix.empty()) {
      logits[kEosId] = 3.0;
      logits[kA] = 3.0 - 0.08 * static_cast<double>(seed);
    } else {
      const int64_t words[] = {kUnkId, kA, kB};
      const bool ends = static_cast<uint64_t>(prefix.size()) >= 2 + seed % 3;
      logits[ends ? kEosId : words[rng() % 3]] += 6.0;
    }
    logits[kPadId] = logits[kBosId] = kNever;
    return at::log_softmax(at::tensor(logits, at::kDouble), 0);
  };
}

/// The best `nbest` outputs of a wide beam search over a scripted model (see below).
std::vector<Hypothesis> wide_search(const PrefixLogProbs& next, int64_t limit, int64_t nbest,
                                    double alpha, bool early) {
  return search_script(next, stopping_config(120, nbest, alpha, early), limit).nbest;
}

// A beam wider than every step's candidates (27 live prefixes × 4 tokens at the last step) holds
// them all, so beam search is exhaustive search unless it stops too soon: its n-best must be the
// true n best, for every α. Early stopping must get some of these wrong (else the scripts would
// not test the bound) and none at α 0, where both bounds are the same.
TEST(BeamStopping, ExactSearchFindsTheExhaustiveBestForEveryAlpha) {
  constexpr int64_t kLimit = 4;
  int64_t early_misses = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const auto next = random_script(seed);
    for (const double alpha : {0.0, 0.6, 1.0, 2.0}) {
      const auto all = exhaustive_outputs(next, kScriptVocab, kLimit, alpha);
      ASSERT_EQ(all.size(), 121u);  // 1 + 3 + 9 + 27 ended by eos, 81 cut at the limit
      for (const int64_t nbest : {1, 3}) {
        const auto beam = wide_search(next, kLimit, nbest, alpha, false);
        ASSERT_EQ(beam.size(), static_cast<size_t>(nbest));
        for (size_t i = 0; i < beam.size(); ++i) {
          EXPECT_EQ(beam[i].tokens, all[i].tokens)
              << "seed " << seed << " alpha " << alpha << " nbest " << nbest << " rank " << i;
          EXPECT_NEAR(beam[i].score, all[i].score, 1e-5 * std::abs(all[i].score))
              << "seed " << seed << " alpha " << alpha << " nbest " << nbest << " rank " << i;
        }
      }
      const bool early_missed =
          wide_search(next, kLimit, 1, alpha, true)[0].tokens != all[0].tokens;
      if (alpha == 0.0) {
        EXPECT_FALSE(early_missed) << "seed " << seed;
      }
      early_misses += early_missed ? 1 : 0;
    }
  }
  EXPECT_GE(early_misses, 4);  // 6 of the 36 with α > 0
}

// The same on the real model of test_beam_search.cpp's exhaustive test (vocabulary 6, outputs of
// at most 3 tokens, a beam of 36 holding every candidate), nbest 1, with eos favoured so that
// short outputs finish first.
TEST(BeamStopping, ExactSearchOnARealModelFindsTheExhaustiveBestForEveryAlpha) {
  const auto src = torch::tensor({int64_t(4), int64_t(5), kEosId}).unsqueeze(0);  // [1, 3]
  for (const uint64_t seed : {11, 12, 13}) {
    auto model = seeded_model(small_model_config(kScriptVocab, kScriptVocab, 16), seed, 1.5);
    for (const double alpha : {0.0, 0.6, 1.0, 2.0}) {
      auto config = stopping_config(36, 1, alpha, false);
      config.max_len_offset = 1;  // limit: 2 source tokens + 1
      const auto all = exhaustive_outputs(model_next(model, src), kScriptVocab, 3, alpha);
      const auto best = beam_search(model, src, config)[0];
      ASSERT_EQ(best.size(), 1u);
      EXPECT_EQ(best[0].tokens, all[0].tokens) << "seed " << seed << " alpha " << alpha;
      EXPECT_NEAR(best[0].score, all[0].score, 1e-5 * std::abs(all[0].score))
          << "seed " << seed << " alpha " << alpha;
    }
  }
}

}  // namespace
}  // namespace nmt
