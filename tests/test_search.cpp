// decode/search.cpp: greedy search (cached and naive), output limits, decode batches and
// decode_all; the limits every search shares.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <vector>

#include "core/special_ids.h"
#include "decode/search.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

TEST(Search, MaxOutputLengthIsSourcePlusOffsetCappedByPositions) {
  auto model = random_model(1, 0.0, 16);
  EXPECT_EQ(max_output_length(model, 3, decode_config(1, 1, 5)), 8);
  EXPECT_EQ(max_output_length(model, 12, decode_config(1, 1, 5)), 15);  // max_len - 1
}

TEST(Search, CachedGreedyMatchesNaiveLoopOnPaddedBatches) {
  auto model = trained_model();
  const std::vector<std::vector<int64_t>> batches = {{5, 1, 9, 3}, {2}, {7, 7, 4, 12, 1, 6}};
  std::set<std::vector<int64_t>> distinct;
  std::set<int64_t> tokens;
  int eos_endings = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    const auto src = random_sources(batches[b], 100 + b);
    const auto config = decode_config();
    const auto cached = greedy_search(model, src, config);
    const auto naive = greedy_search_naive(model, src, config);
    ASSERT_EQ(cached.size(), naive.size());
    for (size_t row = 0; row < cached.size(); ++row) {
      EXPECT_EQ(cached[row].tokens, naive[row].tokens) << "batch " << b << " row " << row;
      EXPECT_NEAR(cached[row].log_prob, naive[row].log_prob, 1e-3);
      distinct.insert(cached[row].tokens);
      tokens.insert(cached[row].tokens.begin(), cached[row].tokens.end());
      const auto limit = max_output_length(model, batches[b][row], config);
      eos_endings += static_cast<int64_t>(cached[row].tokens.size()) < limit;
    }
  }
  // The comparison means something only if outputs are varied and some end with eos.
  EXPECT_GE(distinct.size(), 8u);
  EXPECT_GE(tokens.size(), 8u);
  EXPECT_GE(eos_endings, 6);
}

TEST(Search, CachedGreedyMatchesNaiveLoopWithPreNormSinusoidalTiedModel) {
  auto config = tiny_model_config();
  config.norm = Norm::kPre;
  config.positions = Positions::kSinusoidal;
  config.share_embeddings = true;
  config.tie_output = true;
  torch::manual_seed(9);
  Seq2Seq model(config);
  model->eval();
  const auto src = random_sources({6, 2, 9, 4}, 12);
  const auto cached = greedy_search(model, src, decode_config());
  const auto naive = greedy_search_naive(model, src, decode_config());
  for (size_t row = 0; row < cached.size(); ++row) {
    EXPECT_EQ(cached[row].tokens, naive[row].tokens) << "row " << row;
    // Log-probs differ at once if a cached position or key were wrong, even where argmax doesn't.
    EXPECT_NEAR(cached[row].log_prob, naive[row].log_prob, 1e-3) << "row " << row;
    EXPECT_GE(cached[row].tokens.size(), 2u);
  }
}

TEST(Search, OutputLengthLimitIsRespected) {
  auto model = random_model(2, -1e4, 12);  // eos never wins: every hypothesis hits the limit
  const std::vector<int64_t> lengths = {3, 1, 10};
  const auto src = random_sources(lengths, 4);
  const auto config = decode_config(3, 2, 2);
  const auto greedy = greedy_search(model, src, config);
  const auto naive = greedy_search_naive(model, src, config);
  const auto beam = beam_search(model, src, config);
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto limit = std::min<int64_t>(lengths[row] + 2, 11);
    EXPECT_EQ(static_cast<int64_t>(greedy[row].tokens.size()), limit);
    EXPECT_EQ(naive[row].tokens, greedy[row].tokens);
    for (const auto& h : beam[row]) EXPECT_EQ(static_cast<int64_t>(h.tokens.size()), limit);
  }
  auto sampling = config;
  sampling.search = SearchKind::kSample;
  sampling.sample = 3;
  sampling.epsilon = 0.0;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto samples = sample_search(model, src, sampling, generator);
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto limit = std::min<int64_t>(lengths[row] + 2, 11);
    for (const auto& h : samples[row]) EXPECT_EQ(static_cast<int64_t>(h.tokens.size()), limit);
  }
}

TEST(Search, NeverEmitsPadOrBos) {
  auto model = random_model(4);
  {
    torch::NoGradGuard no_grad;
    model->decoder->output->bias[kPadId] += 50.0;  // the model prefers them above all
    model->decoder->output->bias[kBosId] += 50.0;
  }
  const auto src = random_sources({3, 5}, 8);
  auto hypotheses = greedy_search(model, src, decode_config());
  const auto naive = greedy_search_naive(model, src, decode_config());
  hypotheses.insert(hypotheses.end(), naive.begin(), naive.end());
  for (const auto& nbest : beam_search(model, src, decode_config(3, 3))) {
    hypotheses.insert(hypotheses.end(), nbest.begin(), nbest.end());
  }
  auto sampling = decode_config();
  sampling.search = SearchKind::kSample;
  sampling.sample = 20;
  sampling.epsilon = 0.0;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1);
  for (const auto& draws : sample_search(model, src, sampling, generator)) {
    for (const auto& h : draws) {  // (a draw may end at once: eos is a valid first token)
      for (const int64_t token : h.tokens) {
        EXPECT_TRUE(token != kPadId && token != kBosId) << token;
      }
    }
  }
  for (const auto& h : hypotheses) {
    EXPECT_FALSE(h.tokens.empty());
    for (const int64_t token : h.tokens) {
      EXPECT_TRUE(token != kPadId && token != kBosId) << token;
    }
  }
}

TEST(Search, DecodeBatchesRespectBudgetAndCoverEverySource) {
  const std::vector<int64_t> lengths = {5, 1, 30, 2, 9, 9, 3};
  const auto batches = decode_batches(lengths, 20);
  std::vector<int> seen(lengths.size(), 0);
  for (const auto& batch : batches) {
    int64_t longest = 0;
    for (const size_t i : batch) longest = std::max(longest, lengths[i]), ++seen[i];
    if (batch.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(batch.size()) * (longest + 1), 20);
    }
  }
  EXPECT_EQ(seen, std::vector<int>(lengths.size(), 1));
}

TEST(Search, DecodeAllKeepsInputOrder) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {7, 1, 4, 9, 2, 4};
  const auto src = random_sources(lengths, 21);
  const auto sources = source_ids(src, lengths);
  for (const int64_t beam : {1, 3}) {
    auto config = decode_config(beam, 1);
    config.batch_tokens = 12;  // several batches, sorted by length
    const auto all = decode_all(model, sources, config, at::kCPU);
    ASSERT_EQ(all.size(), sources.size());
    for (size_t row = 0; row < sources.size(); ++row) {
      const auto one =
          beam_search(model, src.slice(0, row, row + 1).slice(1, 0, lengths[row] + 1), config);
      EXPECT_EQ(all[row][0].tokens, one[0][0].tokens) << "beam " << beam << " row " << row;
    }
  }
}

/// Counts decode_all's batches: it asks its stop check once before each.
std::atomic<int> batches_asked{0};  // workers ask from their threads
bool count_batch() {
  ++batches_asked;
  return false;
}

TEST(Search, DecodeBudgetCountsEveryBeamAndSampleRow) {
  auto model = trained_model();
  // 40 sources of 3 tokens: 4 with eos. A budget of 32 holds 8 decoded rows.
  const std::vector<int64_t> lengths(40, 3);
  const auto sources = source_ids(random_sources(lengths, 5), lengths);
  const auto batches_of = [&](DecodeConfig config, int64_t workers = 1) {
    config.batch_tokens = 32;
    batches_asked = 0;
    decode_all(model, sources, config, at::kCPU, &count_batch, workers);
    return static_cast<size_t>(batches_asked.load());
  };
  const auto greedy = decode_batches(lengths, 32, 1), four = decode_batches(lengths, 32, 4);
  EXPECT_EQ(greedy.front().size(), 8u);  // greedy: 8 rows x 4
  EXPECT_EQ(four.front().size(), 2u);    // beam 4 or 4 samples: 2 sources = 8 rows
  ASSERT_NE(greedy.size(), four.size());
  EXPECT_EQ(batches_of(decode_config(1, 1)), greedy.size());
  EXPECT_EQ(batches_of(decode_config(4, 1)), four.size());
  auto sampling = decode_config(1, 1);
  sampling.search = SearchKind::kSample;
  sampling.sample = 4;
  EXPECT_EQ(batches_of(sampling), four.size());
  // Several workers take tapered batches (smaller at the end), one worker whole ones.
  const auto tapered = decode_batches(lengths, 32, 1, /*taper=*/true);
  ASSERT_GT(tapered.size(), greedy.size());
  EXPECT_EQ(batches_of(decode_config(1, 1), /*workers=*/2), tapered.size());
}

TEST(Search, DecodeBatchesGetSmallerTowardsTheEndLongestFirst) {
  // 100 sources of 9 tokens (10 with eos), budget 100: full batches of 10 while the work left
  // is 4 budgets or more, then each at most a quarter of what is left, down to 100 / 8 tokens.
  std::vector<int64_t> lengths(100, 9);
  lengths[37] = 20;                                 // the longest leads the first batch
  const auto whole = decode_batches(lengths, 100);  // untapered (one worker): full batches
  EXPECT_EQ(whole.size(), 11u);
  EXPECT_EQ(whole.back().size(), 6u);
  const auto batches = decode_batches(lengths, 100, 1, /*taper=*/true);
  ASSERT_GE(batches.size(), 12u);
  EXPECT_EQ(batches.front().front(), 37u);
  EXPECT_EQ(batches[1].size(), 10u);
  for (size_t b = 2; b < batches.size(); ++b) {
    EXPECT_LE(batches[b].size(), batches[b - 1].size()) << "batch " << b;
  }
  EXPECT_EQ(batches.back().size(), 1u);  // 10 tokens: within the floor of 12
  size_t covered = 0;
  for (const auto& batch : batches) covered += batch.size();
  EXPECT_EQ(covered, lengths.size());
}

TEST(Search, RestoresTrainingMode) {
  auto model = random_model(1);
  model->train();
  greedy_search(model, random_sources({3}, 1), decode_config());
  EXPECT_TRUE(model->is_training());
  EXPECT_TRUE(model->decoder->is_training());
}
}  // namespace
}  // namespace nmt
