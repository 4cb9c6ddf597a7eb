#include <gtest/gtest.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "core/special_ids.h"
#include "decode/search.h"
#include "decode_test_util.h"

namespace nmt {
namespace {

constexpr int64_t kVocab = 24;

ModelConfig tiny_model_config(int64_t max_len = 64) {
  return test::small_model_config(kVocab, kVocab, max_len);
}

/// A seeded random model; `eos_bias` is added to eos' logit so that hypotheses end early
/// (positive) or never (very negative).
Seq2Seq random_model(uint64_t seed, double eos_bias = 0.0, int64_t max_len = 64) {
  torch::manual_seed(seed);
  Seq2Seq model(tiny_model_config(max_len));
  torch::NoGradGuard no_grad;
  model->decoder->output->bias[kEosId] += eos_bias;
  model->eval();
  return model;
}

/// A model trained for a few dozen steps to map every source token to another, in order. A random
/// model repeats one token whatever the source; this part-trained one gives outputs that depend
/// on the source, vary in tokens and length and mostly end with eos. Seeded; trained once per
/// process and shared (the searches leave it unchanged).
Seq2Seq train_tiny_model() {
  torch::manual_seed(17);
  Seq2Seq model(tiny_model_config());
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(5e-3));
  std::mt19937 rng(17);
  for (int step = 0; step < 40; ++step) {
    std::vector<int64_t> src(32 * 9, kPadId), tgt(32 * 10, kPadId);  // tgt: bos + y + eos
    for (size_t row = 0; row < 32; ++row) {
      const size_t length = 1 + rng() % 8;
      tgt[row * 10] = kBosId;
      for (size_t i = 0; i < length; ++i) {
        const int64_t x = 4 + static_cast<int64_t>(rng() % (kVocab - 4));
        src[row * 9 + i] = x;
        tgt[row * 10 + i + 1] = (x * 7) % (kVocab - 4) + 4;
      }
      src[row * 9 + length] = kEosId;
      tgt[row * 10 + length + 1] = kEosId;
    }
    const auto src_t = torch::tensor(src).view({32, 9});
    const auto tgt_t = torch::tensor(tgt).view({32, 10});
    const auto logits = model->forward(src_t, tgt_t.slice(1, 0, 9));  // [32, 9, vocab]
    const auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, kVocab}), tgt_t.slice(1, 1).reshape(-1),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kPadId));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  model->eval();
  return model;
}

Seq2Seq trained_model() {
  static const Seq2Seq model = train_tiny_model();
  return model;
}

/// Padded, eos-terminated sources [batch, longest + 1] with the given lengths (eos excluded).
at::Tensor random_sources(const std::vector<int64_t>& lengths, uint64_t seed) {
  torch::manual_seed(seed);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  auto src = at::zeros({static_cast<int64_t>(lengths.size()), longest + 1}, at::kLong);
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto r = static_cast<int64_t>(row);
    src[r].slice(0, 0, lengths[row]) = torch::randint(4, kVocab, {lengths[row]}, at::kLong);
    src[r][lengths[row]] = kEosId;
  }
  return src;
}

DecodeConfig decode_config(int64_t beam = 1, int64_t nbest = 1, int64_t offset = 10) {
  DecodeConfig config;
  config.beam = beam;
  config.nbest = nbest;
  config.max_len_offset = offset;
  return config;
}

TEST(Search, LengthPenaltyIsGnmt) {
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(1, 0.6), 1.0);
  EXPECT_NEAR(gnmt_length_penalty(7, 0.6), std::pow(2.0, 0.6), 1e-12);
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(30, 0.0), 1.0);
}

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

TEST(Search, BeamOneEqualsGreedy) {
  auto model = trained_model();
  const auto src = random_sources({4, 8, 1, 6, 3}, 5);
  const auto greedy = greedy_search(model, src, decode_config());
  const auto beam = beam_search(model, src, decode_config(1, 1));
  ASSERT_EQ(beam.size(), greedy.size());
  for (size_t row = 0; row < greedy.size(); ++row) {
    ASSERT_EQ(beam[row].size(), 1u);
    EXPECT_EQ(beam[row][0].tokens, greedy[row].tokens) << "row " << row;
    EXPECT_NEAR(beam[row][0].log_prob, greedy[row].log_prob, 1e-3);
  }
}

TEST(Search, BeamReturnsNbestSortedByPenalisedScore) {
  auto model = trained_model();
  const auto src = random_sources({6, 2, 9}, 9);
  auto config = decode_config(5, 3);
  config.length_penalty = 1.0;
  const auto nbest = beam_search(model, src, config);
  ASSERT_EQ(nbest.size(), 3u);
  for (const auto& hypotheses : nbest) {
    ASSERT_EQ(hypotheses.size(), 3u);
    for (size_t i = 0; i < hypotheses.size(); ++i) {
      if (i > 0) {
        EXPECT_GE(hypotheses[i - 1].score, hypotheses[i].score);
      }
      EXPECT_LE(hypotheses[i].log_prob, 0.0);
    }
  }
}

/// Next-token log-probabilities after `prefix` by a teacher-forced full forward pass: an
/// independent reference for the search. -> [vocab]
at::Tensor reference_next(Seq2Seq& model, const at::Tensor& src,
                          const std::vector<int64_t>& prefix) {
  torch::NoGradGuard no_grad;
  const auto logits = model->forward(src, torch::tensor(prefix).unsqueeze(0));  // [1, t, V]
  return at::log_softmax(logits[0][-1], -1);
}

TEST(Search, WideBeamMatchesExhaustiveSearchOnShortOutputs) {
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
    EXPECT_NEAR(beam[i].score, all[i].score, 1e-4) << "rank " << i;
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
  std::vector<std::vector<int64_t>> sources;
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto ids = src[static_cast<int64_t>(row)].slice(0, 0, lengths[row]).contiguous();
    sources.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
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

DecodeConfig sampling_config(int64_t draws, double epsilon, int64_t offset = 10) {
  DecodeConfig config = decode_config(1, 1, offset);
  config.sample = draws;
  config.epsilon = epsilon;
  return config;
}

std::vector<std::vector<Hypothesis>> draw(Seq2Seq& model, const at::Tensor& src,
                                          const DecodeConfig& config, uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return sample_search(model, src, config, generator);
}

TEST(Search, SamplingWithEpsilonOneHalfIsGreedy) {
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

TEST(Search, SampledFirstTokensFollowTheModelDistribution) {
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

TEST(Search, EpsilonSamplingNeverDrawsATokenBelowEpsilon) {
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

TEST(Search, SamplesAreReproducibleBySeedAndScoredByTheModel) {
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

TEST(Search, DecodeAllSamplesInInputOrderWithTheConfigSeed) {
  auto model = trained_model();
  const std::vector<int64_t> lengths = {7, 1, 4};
  const auto src = random_sources(lengths, 21);
  std::vector<std::vector<int64_t>> sources;
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto ids = src[static_cast<int64_t>(row)].slice(0, 0, lengths[row]).contiguous();
    sources.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
  auto config = sampling_config(4, 0.5);  // greedy draws: comparable row by row
  config.batch_tokens = 8;                // 2 source tokens per draw: one source per batch
  const auto all = decode_all(model, sources, config, at::kCPU);
  const auto greedy = greedy_search(model, src, decode_config());
  ASSERT_EQ(all.size(), 3u);
  for (size_t row = 0; row < 3; ++row) {
    ASSERT_EQ(all[row].size(), 4u);
    EXPECT_EQ(all[row][3].tokens, greedy[row].tokens) << "row " << row;
  }
  config.epsilon = 0.0;
  config.seed = 9;
  const auto first = decode_all(model, sources, config, at::kCPU);
  const auto again = decode_all(model, sources, config, at::kCPU);
  for (size_t row = 0; row < 3; ++row) {
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(first[row][k].tokens, again[row][k].tokens);
  }
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
