// decode/repetition.h: no_repeat_ngram_size and repetition_penalty, alone and in every search.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "decode/repetition.h"
#include "decode/search.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

TEST(Repetition, BannedTokensCompleteAnNgramTheHistoryHolds) {
  const std::vector<int64_t> history = {5, 6, 7, 5, 6};
  EXPECT_EQ(banned_by_ngrams(history, 3), (std::vector<int64_t>{7}));  // "5 6" was followed by 7
  EXPECT_EQ(banned_by_ngrams(history, 2), (std::vector<int64_t>{7}));  // "6" was followed by 7
  EXPECT_EQ(banned_by_ngrams(history, 1), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(banned_by_ngrams({5, 6, 5, 6, 5}, 2), (std::vector<int64_t>{6}));
  EXPECT_EQ(banned_by_ngrams({5, 6, 8, 5, 6}, 3), (std::vector<int64_t>{8}));
  EXPECT_TRUE(banned_by_ngrams(history, 4).empty());  // "7 5 6" never came before
  EXPECT_TRUE(banned_by_ngrams({5}, 3).empty());
  EXPECT_TRUE(banned_by_ngrams({}, 1).empty());
  EXPECT_TRUE(banned_by_ngrams(history, 0).empty());
}

TEST(Repetition, GuardsPenaliseBanAndRenormalise) {
  const auto log_probs = at::log_softmax(at::tensor({1.0f, 2.0f, 0.5f, 3.0f, 0.0f}), -1);
  const std::vector<int64_t> history = {1, 3, 1};
  DecodeConfig config;
  auto off = log_probs.clone().unsqueeze(0);
  guard_repetition(off, {&history}, config);
  EXPECT_TRUE(off[0].equal(log_probs));  // no guard: untouched
  config.repetition_penalty = 2.0;
  auto penalised = log_probs.clone().unsqueeze(0);
  guard_repetition(penalised, {&history}, config);
  auto expected = log_probs.clone();
  expected[1] *= 2.0;
  expected[3] *= 2.0;
  EXPECT_TRUE(penalised[0].allclose(at::log_softmax(expected, -1)));
  EXPECT_NEAR(penalised[0].exp().sum().item<float>(), 1.0f, 1e-5);
  config.repetition_penalty = 1.0;
  config.no_repeat_ngram_size = 2;  // "1" was followed by 3: 3 is banned
  auto banned = log_probs.clone().unsqueeze(0);
  guard_repetition(banned, {&history}, config);
  EXPECT_TRUE(std::isinf(banned[0][3].item<float>()));
  EXPECT_NEAR(banned[0].exp().sum().item<float>(), 1.0f, 1e-5);
  EXPECT_GT(banned[0][0].item<float>(), log_probs[0].item<float>());
}

/// Whether `tokens` holds an n-gram twice.
bool repeats_ngram(const std::vector<int64_t>& tokens, size_t n) {
  std::map<std::vector<int64_t>, int> seen;
  for (size_t i = 0; i + n <= tokens.size(); ++i) {
    if (++seen[std::vector<int64_t>(tokens.begin() + long(i), tokens.begin() + long(i + n))] > 1) {
      return true;
    }
  }
  return false;
}

// A random model repeats one token whatever the source (search_test_util.h): without a guard
// its outputs hold repeated n-grams; with no_repeat_ngram_size none does, in greedy, beam and
// sampling search alike, and a strong repetition penalty leaves fewer repeated tokens.
TEST(Repetition, EverySearchHonoursTheGuards) {
  auto model = random_model(3, /*eos_bias=*/-5.0);
  const auto src = random_sources({6, 9, 4}, 5);
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto outputs = [&](const DecodeConfig& config) {
    std::vector<std::vector<int64_t>> out;
    if (config.sample > 0) {
      for (const auto& row : sample_search(model, src, config, generator)) {
        for (const auto& h : row) out.push_back(h.tokens);
      }
    } else if (config.beam > 1) {
      for (const auto& row : beam_search(model, src, config)) out.push_back(row[0].tokens);
    } else {
      for (const auto& h : greedy_search(model, src, config)) out.push_back(h.tokens);
    }
    return out;
  };
  const auto repeated_tokens = [](const std::vector<std::vector<int64_t>>& all) {
    size_t count = 0;
    for (const auto& tokens : all) {
      std::map<int64_t, int> seen;
      for (const int64_t t : tokens) count += ++seen[t] > 1 ? 1 : 0;
    }
    return count;
  };
  for (const int64_t beam : {1, 4}) {
    for (const int64_t sample : {0, 3}) {
      if (beam > 1 && sample > 0) continue;
      DecodeConfig config = decode_config(beam, 1, 12);
      if (sample > 0) config.search = SearchKind::kSample;
      config.sample = sample;
      config.epsilon = 0.0;
      const auto plain = outputs(config);
      bool any = false;
      for (const auto& tokens : plain) any = any || repeats_ngram(tokens, 2);
      EXPECT_TRUE(any) << "beam " << beam << ", sample " << sample << ": no repeat to guard";
      config.no_repeat_ngram_size = 2;
      for (const auto& tokens : outputs(config)) {
        EXPECT_FALSE(repeats_ngram(tokens, 2)) << "beam " << beam << ", sample " << sample;
        EXPECT_FALSE(tokens.empty());
      }
      config.no_repeat_ngram_size = 0;
      config.repetition_penalty = 10.0;
      EXPECT_LT(repeated_tokens(outputs(config)), repeated_tokens(plain))
          << "beam " << beam << ", sample " << sample;
    }
  }
}

// A forced prefix is the user's: it may repeat itself, and the guards start after it. Every
// search keeps "7 7 7" under no_repeat_ngram_size 1 with a finite score, and guards the rest.
TEST(Repetition, AForcedPrefixMayRepeatItself) {
  auto model = random_model(3, /*eos_bias=*/-5.0);
  const auto src = random_sources({6, 9}, 5);
  std::vector<OutputGuide> guides(2);
  guides[0].prefix = {7, 7, 7};
  guides[1].prefix = {9, 8, 9, 8};
  DecodeConfig config = decode_config(1, 1, 12);
  config.no_repeat_ngram_size = 1;
  const auto check = [&](const Hypothesis& h, size_t row, const std::string& search) {
    const auto& prefix = guides[row].prefix;
    ASSERT_GE(h.tokens.size(), prefix.size()) << search;
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), h.tokens.begin())) << search;
    EXPECT_TRUE(std::isfinite(h.log_prob)) << search;
    const std::vector<int64_t> rest(h.tokens.begin() + long(prefix.size()), h.tokens.end());
    for (const int64_t t : rest) {
      EXPECT_EQ(std::count(h.tokens.begin(), h.tokens.end(), t), 1) << search << " token " << t;
    }
  };
  const auto greedy = greedy_search(model, src, config, guides);
  for (size_t row = 0; row < 2; ++row) check(greedy[row], row, "greedy");
  DecodeConfig beam = config;
  beam.beam = 4;
  const auto beamed = beam_search(model, src, beam, guides);
  for (size_t row = 0; row < 2; ++row) check(beamed[row][0], row, "beam");
  DecodeConfig sampling = config;
  sampling.search = SearchKind::kSample;
  sampling.sample = 2;
  sampling.epsilon = 0.0;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto samples = sample_search(model, src, sampling, generator, guides);
  for (size_t row = 0; row < 2; ++row) {
    for (const auto& h : samples[row]) check(h, row, "sampling");
  }
}

}  // namespace
}  // namespace nmt
