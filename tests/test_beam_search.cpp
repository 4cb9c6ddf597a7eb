// decode/beam_search.cpp: beam search against teacher forcing, the GNMT penalty and exhaustive
// search.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "core/special_ids.h"
#include "decode/search.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

TEST(BeamSearch, LengthPenaltyIsGnmt) {
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(1, 0.6), 1.0);
  EXPECT_NEAR(gnmt_length_penalty(7, 0.6), std::pow(2.0, 0.6), 1e-12);
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(30, 0.0), 1.0);
}

TEST(BeamSearch, BeamOneEqualsGreedy) {
  auto model = trained_model();
  const auto src = random_sources({4, 8, 1, 6, 3}, 5);
  const auto greedy = greedy_search(model, src, decode_config());
  const auto beam = beam_search(model, src, decode_config(1, 1));
  ASSERT_EQ(beam.size(), greedy.size());
  for (size_t row = 0; row < greedy.size(); ++row) {
    ASSERT_EQ(beam[row].size(), 1u);
    EXPECT_EQ(beam[row][0].tokens, greedy[row].tokens) << "row " << row;
    EXPECT_NEAR(beam[row][0].log_prob, greedy[row].log_prob, 1e-6 * std::abs(greedy[row].log_prob));
  }
}

/// The model's teacher-forced log-probability of `tokens` (then eos, if `with_eos`) given one
/// unpadded source row [1, src_len]: the sum of the reference's next-token log-probabilities.
double teacher_forced_log_prob(Seq2Seq& model, const at::Tensor& src,
                               const std::vector<int64_t>& tokens, bool with_eos) {
  std::vector<int64_t> prefix = {kBosId};
  double sum = 0.0;
  for (const int64_t token : tokens) {
    sum += reference_next(model, src, prefix)[token].item<double>();
    prefix.push_back(token);
  }
  if (with_eos) sum += reference_next(model, src, prefix)[kEosId].item<double>();
  return sum;
}

// Beam 4 on the part-trained model, several sentences of different lengths in one batch: every
// hypothesis' log-prob is the model's teacher-forced log-prob of its tokens (eos included when it
// ended with eos), and its score is that over the GNMT penalty ((5 + |y|) / 6)^α, written out
// here. A cache reordered with the wrong parent rows (e.g. sorted ones) feeds each hypothesis
// another's keys and values, so its log-probs stop matching the teacher-forced ones.
TEST(BeamSearch, HypothesesCarryTheirTeacherForcedLogProbAndThePenalisedScore) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {6, 2, 9, 4, 7};
  const auto src = random_sources(lengths, 9);
  auto config = decode_config(4, 4);
  config.length_penalty = 1.0;
  const auto nbest = beam_search(model, src, config);
  ASSERT_EQ(nbest.size(), lengths.size());
  std::set<size_t> sizes;
  int eos_endings = 0;
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto one = src.slice(0, row, row + 1).slice(1, 0, lengths[row] + 1);  // unpadded
    const int64_t limit = max_output_length(model, lengths[row], config);
    ASSERT_EQ(nbest[row].size(), 4u) << "row " << row;
    std::set<std::vector<int64_t>> distinct;
    for (size_t i = 0; i < nbest[row].size(); ++i) {
      const auto& h = nbest[row][i];
      const bool eos = static_cast<int64_t>(h.tokens.size()) < limit;
      const double expected = teacher_forced_log_prob(model, one, h.tokens, eos);
      EXPECT_NEAR(h.log_prob, expected, 2e-5 * std::abs(expected) + 1e-6)
          << "row " << row << " rank " << i;
      const double length = static_cast<double>(h.tokens.size()) + (eos ? 1.0 : 0.0);
      EXPECT_DOUBLE_EQ(h.score, h.log_prob / std::pow((5.0 + length) / 6.0, 1.0))
          << "row " << row << " rank " << i;
      if (i > 0) {
        EXPECT_GE(nbest[row][i - 1].score, h.score) << "row " << row;
      }
      distinct.insert(h.tokens);
      sizes.insert(h.tokens.size());
      eos_endings += eos ? 1 : 0;
    }
    EXPECT_EQ(distinct.size(), 4u) << "row " << row;
  }
  // Meaningful only if hypotheses vary in length and most end with eos.
  EXPECT_GE(sizes.size(), 4u);
  EXPECT_GE(eos_endings, 12);
}

// A vocabulary of 6 (pad, unk, bos, eos and two words: unk is a valid output) and outputs of at
// most 3 tokens: 40 possible outputs, all enumerated. A beam of 36 holds every candidate at
// every step (9 live prefixes × 4 valid tokens), so the n-best list must be the true top 6 in
// order, with the same log-probs and scores. Three steps: the second reorder of the cache has
// parents out of order, and the early stop must not drop a longer output that the length
// penalty (α = 1.5) favours.
TEST(BeamSearch, NbestIsTheExhaustiveTopKOnAModelSmallEnoughToEnumerate) {
  constexpr int64_t kTinyVocab = 6;
  torch::manual_seed(11);
  Seq2Seq model(small_model_config(kTinyVocab, kTinyVocab, 16));
  model->eval();
  const auto src = torch::tensor({int64_t(4), int64_t(5), kEosId}).unsqueeze(0);  // [1, 3]
  DecodeConfig config = decode_config(36, 6, 1);  // limit: 2 source tokens + 1
  config.length_penalty = 1.5;
  const int64_t limit = max_output_length(model, 2, config);
  ASSERT_EQ(limit, 3);
  const auto all =
      exhaustive_outputs(model_next(model, src), kTinyVocab, limit, config.length_penalty);
  ASSERT_EQ(all.size(), 40u);
  const auto beam = beam_search(model, src, config)[0];
  ASSERT_EQ(beam.size(), 6u);
  std::set<size_t> lengths;
  for (size_t i = 0; i < beam.size(); ++i) {
    EXPECT_EQ(beam[i].tokens, all[i].tokens) << "rank " << i;
    EXPECT_NEAR(beam[i].log_prob, all[i].log_prob, 1e-5 * std::abs(all[i].log_prob))
        << "rank " << i;
    EXPECT_NEAR(beam[i].score, all[i].score, 1e-5 * std::abs(all[i].score)) << "rank " << i;
    lengths.insert(all[i].tokens.size());
  }
  EXPECT_GE(lengths.size(), 2u);  // the top 6 mix lengths: the penalty decides their order
}

TEST(BeamSearch, WideBeamMatchesExhaustiveSearchOnShortOutputs) {
  // Source of 1 token, offset 1: outputs of at most 2 tokens. A beam as wide as the vocabulary
  // keeps every 1-token prefix, so its best three must be the exhaustive best three (over
  // outputs without pad and bos, which search never produces).
  auto model = random_model(5, 3.0);
  const auto src = random_sources({1}, 3);
  auto config = decode_config(kVocab, 3, 1);
  const auto beam = beam_search(model, src, config)[0];
  const double lp1 = gnmt_length_penalty(1, config.length_penalty);
  const double lp2 = gnmt_length_penalty(2, config.length_penalty);
  const auto first = reference_next(model, src, {kBosId});
  std::vector<Hypothesis> all = {{{}, 0.0, first[kEosId].item<double>() / lp1}};
  const auto valid = [](int64_t token) { return token != kPadId && token != kBosId; };
  for (int64_t a = 0; a < kVocab; ++a) {
    if (a == kEosId || !valid(a)) continue;
    const auto second = reference_next(model, src, {kBosId, a});
    for (int64_t b = 0; b < kVocab; ++b) {  // (a, eos) and the truncated (a, b) both have |y| = 2
      if (!valid(b)) continue;
      const double log_prob = first[a].item<double>() + second[b].item<double>();
      all.push_back({b == kEosId ? std::vector<int64_t>{a} : std::vector<int64_t>{a, b}, log_prob,
                     log_prob / lp2});
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
  ASSERT_EQ(beam.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(beam[i].tokens, all[i].tokens) << "rank " << i;
    EXPECT_NEAR(beam[i].score, all[i].score, 1e-5 * std::abs(all[i].score)) << "rank " << i;
  }
}
}  // namespace
}  // namespace nmt
