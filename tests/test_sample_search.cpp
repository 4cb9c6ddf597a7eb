// decode/sample_search.cpp: epsilon and ancestral sampling against the model's distribution.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>
#include <vector>

#include "core/special_ids.h"
#include "decode/search.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

DecodeConfig sampling_config(int64_t draws, double epsilon, int64_t offset = 10) {
  DecodeConfig config = decode_config(1, 1, offset);
  config.search = SearchKind::kSample;
  config.sample = draws;
  config.epsilon = epsilon;
  return config;
}

std::vector<std::vector<Hypothesis>> draw(Seq2Seq& model, const at::Tensor& src,
                                          const DecodeConfig& config, uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return sample_search(model, src, config, generator);
}

TEST(SampleSearch, SamplingWithEpsilonOneHalfIsGreedy) {
  // Only a token with probability >= 0.5 survives, or else the most probable one alone.
  auto model = trained_model();
  const auto src = random_sources({4, 8, 1, 6}, 5);
  const auto greedy = greedy_search(model, src, decode_config());
  const auto samples = draw(model, src, sampling_config(3, 0.5), 1);
  ASSERT_EQ(samples.size(), greedy.size());
  for (size_t row = 0; row < greedy.size(); ++row) {
    ASSERT_EQ(samples[row].size(), 3u);
    for (const auto& h : samples[row]) {
      EXPECT_EQ(h.tokens, greedy[row].tokens) << "row " << row;
      EXPECT_NEAR(h.log_prob, greedy[row].log_prob, 1e-4);
      EXPECT_EQ(h.score, h.log_prob);
    }
  }
}

TEST(SampleSearch, SampledFirstTokensFollowTheModelDistribution) {
  // A random model spreads its first-token probability over the vocabulary, made uneven here
  // (two favoured tokens) so that uniform draws would fail; 4,000 draws of plain ancestral
  // sampling must match it within sampling error (4 standard deviations).
  auto model = random_model(5);
  {
    torch::NoGradGuard no_grad;
    model->decoder->output->bias[5] += 5.0;
    model->decoder->output->bias[6] += 2.5;
  }
  const auto src = random_sources({3}, 3);
  const auto probs = reference_next(model, src, {kBosId}).exp();  // [vocab]
  const int64_t draws = 4000;
  const auto samples = draw(model, src, sampling_config(draws, 0.0, 1), 7)[0];
  ASSERT_EQ(static_cast<int64_t>(samples.size()), draws);
  std::vector<double> counts(kVocab, 0.0);
  for (const auto& h : samples) ++counts[h.tokens.empty() ? kEosId : h.tokens[0]];
  EXPECT_EQ(counts[kPadId], 0.0);
  EXPECT_EQ(counts[kBosId], 0.0);
  double mass = 0.0;  // the model's probability of the tokens search may produce
  for (int64_t t = 0; t < kVocab; ++t) {
    if (t != kPadId && t != kBosId) mass += probs[t].item<double>();
  }
  int spread = 0;
  for (int64_t t = 0; t < kVocab; ++t) {
    if (t == kPadId || t == kBosId) continue;
    const double p = probs[t].item<double>() / mass;
    spread += p > 0.02 ? 1 : 0;
    EXPECT_NEAR(counts[t] / draws, p, 4.0 * std::sqrt(p * (1 - p) / draws) + 1e-3) << "token " << t;
  }
  // The test means something only if the distribution is spread and uneven.
  EXPECT_GE(spread, 5);
  EXPECT_GT(probs[5].item<double>() / mass, 0.2);
}

TEST(SampleSearch, EpsilonSamplingNeverDrawsATokenBelowEpsilon) {
  auto model = random_model(5);
  const auto src = random_sources({3}, 3);
  const auto probs = reference_next(model, src, {kBosId}).exp();
  const double epsilon = 0.06;
  std::set<int64_t> first;
  const auto draws = draw(model, src, sampling_config(500, epsilon, 1), 3);
  for (const auto& h : draws[0]) {
    const int64_t token = h.tokens.empty() ? kEosId : h.tokens[0];
    first.insert(token);
    EXPECT_GE(probs[token].item<double>(), epsilon) << "token " << token;
  }
  EXPECT_GE(first.size(), 2u);
}

TEST(SampleSearch, SamplesAreReproducibleBySeedAndScoredByTheModel) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {5, 2, 7};
  const auto src = random_sources(lengths, 12);
  const auto config = sampling_config(6, 0.0);
  const auto a = draw(model, src, config, 1);
  const auto b = draw(model, src, config, 1);
  const auto c = draw(model, src, config, 2);
  bool differs = false;
  for (size_t row = 0; row < lengths.size(); ++row) {
    for (size_t k = 0; k < 6; ++k) {
      EXPECT_EQ(a[row][k].tokens, b[row][k].tokens);
      differs = differs || a[row][k].tokens != c[row][k].tokens;
      // log_prob is the model's teacher-forced log-probability of the draw (eos included).
      const auto one = src.slice(0, row, row + 1).slice(1, 0, lengths[row] + 1);
      std::vector<int64_t> prefix = {kBosId};
      double expected = 0.0;
      for (const int64_t token : a[row][k].tokens) {
        expected += reference_next(model, one, prefix)[token].item<double>();
        prefix.push_back(token);
      }
      if (static_cast<int64_t>(a[row][k].tokens.size()) < lengths[row] + 10) {  // ended by eos
        expected += reference_next(model, one, prefix)[kEosId].item<double>();
      }
      EXPECT_NEAR(a[row][k].log_prob, expected, 1e-3) << "row " << row << " draw " << k;
    }
  }
  EXPECT_TRUE(differs);
}

TEST(SampleSearch, DecodeAllSamplesInInputOrderWithTheConfigSeed) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {7, 1, 4};
  const auto src = random_sources(lengths, 21);
  const auto sources = source_ids(src, lengths);
  auto config = sampling_config(4, 0.5);  // greedy draws: comparable row by row
  config.batch_tokens = 8;                // 2 source tokens per draw: one source per batch
  const auto all = decode_all(model, sources, config, at::kCPU);
  const auto greedy = greedy_search(model, src, decode_config());
  ASSERT_EQ(all.size(), 3u);
  for (size_t row = 0; row < 3; ++row) {
    ASSERT_EQ(all[row].size(), 4u);
    EXPECT_EQ(all[row][3].tokens, greedy[row].tokens) << "row " << row;
  }
  // The draws follow decode.seed: decode_all's generator is seeded with it (a lone source is
  // one batch: the same draws as sample_search with a generator of that seed), the same seed
  // repeats them and another seed changes them.
  config.epsilon = 0.0;
  config.seed = 9;
  const auto first = decode_all(model, sources, config, at::kCPU);
  const auto again = decode_all(model, sources, config, at::kCPU);
  auto reseeded = config;
  reseeded.seed = 10;
  const auto other = decode_all(model, sources, reseeded, at::kCPU);
  bool differs = false;
  for (size_t row = 0; row < 3; ++row) {
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(first[row][k].tokens, again[row][k].tokens);
      differs = differs || first[row][k].tokens != other[row][k].tokens;
    }
  }
  EXPECT_TRUE(differs) << "decode.seed 9 and 10 drew the same samples";
  const auto lone = decode_all(model, {sources[0]}, config, at::kCPU)[0];
  const auto direct = draw(model, src.slice(0, 0, 1).slice(1, 0, lengths[0] + 1), config, 9)[0];
  ASSERT_EQ(lone.size(), direct.size());
  for (size_t k = 0; k < lone.size(); ++k) EXPECT_EQ(lone[k].tokens, direct[k].tokens) << k;
}

}  // namespace
}  // namespace nmt
