// decode/searcher.cpp, decode/nucleus_search.cpp: the strategies decode.search names, made by one
// factory, and the nucleus (top-p) strategy against the model's distribution.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/special_ids.h"
#include "decode/searcher.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

DecodeConfig strategy(SearchKind kind, int64_t draws = 0) {
  DecodeConfig config = decode_config(1, 1, 10);
  config.search = kind;
  config.sample = draws;
  return config;
}

TEST(Searcher, TheFactoryMakesTheStrategyTheConfigNames) {
  auto beam = decode_config(4, 2);
  EXPECT_EQ(make_searcher(beam)->describe(), "beam 4, alpha 0.60");
  EXPECT_TRUE(make_searcher(beam)->keeps_constraints());
  EXPECT_EQ(make_searcher(strategy(SearchKind::kGreedy))->describe(), "greedy");
  auto epsilon = strategy(SearchKind::kSample, 8);
  EXPECT_EQ(make_searcher(epsilon)->describe(), "8 samples, epsilon 0.02, seed 1");
  EXPECT_FALSE(make_searcher(epsilon)->keeps_constraints());
  EXPECT_FALSE(make_searcher(epsilon)->concurrent());
  auto nucleus = strategy(SearchKind::kNucleus, 4);
  nucleus.top_p = 0.8;
  EXPECT_EQ(make_searcher(nucleus)->describe(), "4 samples, top-p 0.8, seed 1");
  // An invalid config is refused by the factory, naming the key.
  test::expect_error([] { make_searcher(strategy(SearchKind::kNucleus, 0)); }, "decode.sample = 0");
}

// A nucleus of at most 1% keeps the most probable token alone: every draw is the greedy output.
TEST(Searcher, NucleusOfOnePercentIsGreedy) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {4, 8, 1, 6};
  const auto src = random_sources(lengths, 5);
  const auto greedy = greedy_search(model, src, decode_config());
  auto config = strategy(SearchKind::kNucleus, 3);
  config.top_p = 0.01;
  const auto draws = decode_all(model, source_ids(src, lengths), config, at::kCPU);
  ASSERT_EQ(draws.size(), greedy.size());
  for (size_t row = 0; row < greedy.size(); ++row) {
    ASSERT_EQ(draws[row].size(), 3u);
    for (const auto& h : draws[row]) EXPECT_EQ(h.tokens, greedy[row].tokens) << "row " << row;
  }
}

// The whole nucleus (top_p = 1) removes nothing: the same draws as plain ancestral sampling.
TEST(Searcher, NucleusOfEverythingIsAncestralSampling) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {5, 2, 7};
  const auto sources = source_ids(random_sources(lengths, 12), lengths);
  auto nucleus = strategy(SearchKind::kNucleus, 6);
  nucleus.top_p = 1.0;
  auto ancestral = strategy(SearchKind::kSample, 6);
  ancestral.epsilon = 0.0;
  const auto a = decode_all(model, sources, nucleus, at::kCPU);
  const auto b = decode_all(model, sources, ancestral, at::kCPU);
  for (size_t row = 0; row < lengths.size(); ++row) {
    for (size_t k = 0; k < 6; ++k) EXPECT_EQ(a[row][k].tokens, b[row][k].tokens);
  }
}

// Every first token drawn lies in the nucleus: the smallest set of most probable tokens whose
// probabilities reach top_p (computed here from the model's own distribution); and more than
// one of them is drawn.
TEST(Searcher, NucleusDrawsOnlyFromTheNucleus) {
  auto model = random_model(5);
  {
    torch::NoGradGuard no_grad;
    model->decoder->output->bias[5] += 3.0;
    model->decoder->output->bias[6] += 2.5;
    model->decoder->output->bias[7] += 2.0;
  }
  const auto src = random_sources({3}, 3);
  auto probs = reference_next(model, src, {kBosId}).exp();  // [vocab]
  probs[kPadId] = 0.0, probs[kBosId] = 0.0;                 // never produced: renormalised away
  probs = probs / probs.sum();
  const double top_p = 0.6;
  const auto [sorted, order] = probs.sort(-1, /*descending=*/true);
  std::set<int64_t> nucleus;
  double mass = 0.0;
  for (int64_t i = 0; mass < top_p; ++i) {
    nucleus.insert(order[i].item<int64_t>());
    mass += sorted[i].item<double>();
  }
  ASSERT_GE(nucleus.size(), 2u);
  ASSERT_LT(nucleus.size(), size_t(kVocab) / 2);
  auto config = strategy(SearchKind::kNucleus, 500);
  config.max_len_offset = 1;
  config.top_p = top_p;
  std::set<int64_t> drawn;
  const auto draws = decode_all(model, source_ids(src, {3}), config, at::kCPU);
  for (const auto& h : draws[0]) {
    const int64_t token = h.tokens.empty() ? kEosId : h.tokens[0];
    drawn.insert(token);
    EXPECT_TRUE(nucleus.count(token)) << "token " << token << " is outside the nucleus";
  }
  EXPECT_GE(drawn.size(), 2u);
}

}  // namespace
}  // namespace nmt
