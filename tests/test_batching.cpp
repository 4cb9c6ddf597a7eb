#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/special_ids.h"
#include "data/batching.h"
#include "data/corpus.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
#include "test_util.h"

namespace nmt {
namespace {

using Batches = std::vector<std::vector<size_t>>;

/// Pairs with lengths 1..40 (source) and correlated target lengths; ids >= 4 encode the example
/// number so collate's output can be traced back.
std::vector<Example> synthetic_examples(size_t n) {
  std::mt19937 rng(7);
  std::vector<Example> examples(n);
  for (size_t i = 0; i < n; ++i) {
    const int src_len = 1 + static_cast<int>(rng() % 40);
    const int tgt_len = std::max(1, src_len + static_cast<int>(rng() % 7) - 3);
    examples[i].src.assign(static_cast<size_t>(src_len), static_cast<int64_t>(4 + i));
    examples[i].tgt.assign(static_cast<size_t>(tgt_len), static_cast<int64_t>(5 + i));
  }
  return examples;
}

BatchingOptions options(int64_t batch_tokens, int64_t seed = 1) {
  BatchingOptions o;
  o.batch_tokens = batch_tokens;
  o.pool_batches = 10;
  o.seed = seed;
  return o;
}

void expect_each_index_once(const Batches& batches, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& batch : batches) {
    for (const size_t i : batch) ++seen.at(i);
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
}

void expect_within_budget(const std::vector<Example>& examples, const Batches& batches,
                          int64_t budget) {
  for (const auto& batch : batches) {
    ASSERT_FALSE(batch.empty());
    size_t src = 0, tgt = 0;
    for (const size_t i : batch) {
      src = std::max(src, examples[i].src.size() + 1);
      tgt = std::max(tgt, examples[i].tgt.size() + 1);
    }
    if (batch.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(batch.size() * src), budget);
      EXPECT_LE(static_cast<int64_t>(batch.size() * tgt), budget);
    }
  }
}

TEST(Batching, RespectsTheBudgetAndCoversEveryPairOncePerEpoch) {
  const auto examples = synthetic_examples(2000);
  for (const int64_t budget : {64, 500, 4096}) {
    for (int64_t epoch = 1; epoch <= 3; ++epoch) {
      const Batches batches = make_batches(examples, options(budget), epoch);
      expect_within_budget(examples, batches, budget);
      expect_each_index_once(batches, examples.size());
    }
  }
  const Batches sorted = make_sorted_batches(examples, 500);
  expect_within_budget(examples, sorted, 500);
  expect_each_index_once(sorted, examples.size());
}

/// Padded slots of `batch` on its longer side, and of one more pair `next` added to it.
std::pair<int64_t, int64_t> padded_sizes(const std::vector<Example>& examples,
                                         const std::vector<size_t>& batch, size_t next) {
  size_t src = examples[next].src.size() + 1, tgt = examples[next].tgt.size() + 1;
  size_t batch_src = 0, batch_tgt = 0;
  for (const size_t i : batch) {
    batch_src = std::max(batch_src, examples[i].src.size() + 1);
    batch_tgt = std::max(batch_tgt, examples[i].tgt.size() + 1);
  }
  src = std::max(src, batch_src), tgt = std::max(tgt, batch_tgt);
  const auto rows = static_cast<int64_t>(batch.size());
  return {rows * static_cast<int64_t>(std::max(batch_src, batch_tgt)),
          (rows + 1) * static_cast<int64_t>(std::max(src, tgt))};
}

// Batches are as full as the budget allows: a batch is cut only when the next pair in length
// order would not fit. Sorted batches come out in that order, so each batch plus the first pair
// of the next must exceed the budget. Shuffled batches: within a pool only the last batch may be
// short, so all but one batch per pool hold so many rows that one more of the longest pair
// would not fit.
TEST(Batching, BatchesAreCutOnlyWhenTheNextPairWouldNotFit) {
  const auto examples = synthetic_examples(2000);
  for (const int64_t budget : {64, 500, 4096}) {
    const Batches sorted = make_sorted_batches(examples, budget);
    for (size_t b = 0; b + 1 < sorted.size(); ++b) {
      EXPECT_GT(padded_sizes(examples, sorted[b], sorted[b + 1].front()).second, budget)
          << "budget " << budget << ", batch " << b << " of " << sorted.size();
    }
    int64_t longest = 0, total = 0;
    for (const auto& e : examples) {
      const auto slots = static_cast<int64_t>(std::max(e.src.size(), e.tgt.size()) + 1);
      longest = std::max(longest, slots);
      total += slots;
    }
    // Pools as make_batches sizes them: pool_batches batches of the mean pair.
    const double per_batch = std::max(1.0, double(budget) / (double(total) / 2000.0));
    const auto pool = static_cast<int64_t>(std::max(1.0, per_batch * 10.0));
    const int64_t pools = (2000 + pool - 1) / pool;
    const Batches batches = make_batches(examples, options(budget), 1);
    int64_t short_batches = 0;
    for (const auto& batch : batches) {
      short_batches += (static_cast<int64_t>(batch.size()) + 1) * longest <= budget ? 1 : 0;
    }
    EXPECT_LE(short_batches, pools) << "budget " << budget << ", " << batches.size() << " batches";
    EXPECT_GT(static_cast<int64_t>(batches.size()), pools);  // the bound has batches to bite on
  }
}

TEST(Batching, IsDeterministicPerSeedAndEpochAndVariesAcrossThem) {
  const auto examples = synthetic_examples(1000);
  const Batches a = make_batches(examples, options(400), 1);
  EXPECT_EQ(make_batches(examples, options(400), 1), a);
  EXPECT_NE(make_batches(examples, options(400), 2), a);
  EXPECT_NE(make_batches(examples, options(400, /*seed=*/2), 1), a);
}

TEST(Batching, LengthBucketingKeepsPaddingLow) {
  const auto examples = synthetic_examples(5000);
  BatchingOptions o = options(2048);
  o.pool_batches = 50;
  EXPECT_LT(padding_ratio(examples, make_batches(examples, o, 1)), 0.10);
  EXPECT_LT(padding_ratio(examples, make_sorted_batches(examples, 2048)), 0.10);
}

TEST(Batching, AnOverlongPairFormsABatchAlone) {
  auto examples = synthetic_examples(50);
  examples[3].src.assign(300, 9);
  const Batches batches = make_batches(examples, options(100), 1);
  expect_each_index_once(batches, examples.size());
  const auto alone = std::find_if(batches.begin(), batches.end(), [](const auto& b) {
    return std::find(b.begin(), b.end(), size_t{3}) != b.end();
  });
  ASSERT_NE(alone, batches.end());
  EXPECT_EQ(alone->size(), 1u);
}

TEST(Batching, CollateShiftsTargetsAndPads) {
  const std::vector<Example> examples{{{10, 11, 12}, {20, 21}}, {{13}, {22, 23, 24, 25}}};
  const Batch batch = collate(examples, {1, 0});
  EXPECT_EQ(batch.indices, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(batch.size(), 2);
  const auto src = torch::tensor({13, 3, 0, 0, 10, 11, 12, 3}, torch::kLong).view({2, 4});
  const auto tgt_in =
      torch::tensor({2, 22, 23, 24, 25, 2, 20, 21, 0, 0}, torch::kLong).view({2, 5});
  const auto tgt_out =
      torch::tensor({22, 23, 24, 25, 3, 20, 21, 3, 0, 0}, torch::kLong).view({2, 5});
  EXPECT_TRUE(torch::equal(batch.src, src));
  EXPECT_TRUE(torch::equal(batch.tgt_in, tgt_in));
  EXPECT_TRUE(torch::equal(batch.tgt_out, tgt_out));
  EXPECT_EQ(batch.src_tokens, 2 + 4);
  EXPECT_EQ(batch.tgt_tokens, 5 + 3);
}

TEST(Batching, CollatedBatchesAreShiftedRightForEveryRow) {
  const auto examples = synthetic_examples(300);
  for (const auto& indices : make_batches(examples, options(600), 1)) {
    const Batch batch = collate(examples, indices);
    for (int64_t r = 0; r < batch.size(); ++r) {
      const auto n = static_cast<int64_t>(examples[indices[static_cast<size_t>(r)]].tgt.size());
      const auto in = batch.tgt_in[r];
      const auto out = batch.tgt_out[r];
      EXPECT_EQ(in[0].item<int64_t>(), kBosId);
      EXPECT_EQ(out[n].item<int64_t>(), kEosId);
      EXPECT_TRUE(torch::equal(in.slice(0, 1, n + 1), out.slice(0, 0, n)));
      EXPECT_EQ(out.slice(0, n + 1).ne(kPadId).sum().item<int64_t>(), 0);
    }
  }
}

TEST(Batching, PaddingRatioCountsPadSlotsOnBothSides) {
  const std::vector<Example> examples{{{1, 1, 1}, {1}}, {{1}, {1}}};
  // src slots 2x4 = 8 with 4+2 real; tgt slots 2x2 = 4, all real -> 2 pads in 12.
  EXPECT_DOUBLE_EQ(padding_ratio(examples, {{0, 1}}), 2.0 / 12.0);
  EXPECT_DOUBLE_EQ(padding_ratio(examples, {{0}, {1}}), 0.0);
}

TEST(Batching, ToCpuKeepsTheTensors) {
  const std::vector<Example> examples{{{10, 11}, {20}}};
  const Batch batch = collate(examples, {0});
  const Batch moved = batch.to(at::Device(at::kCPU));
  EXPECT_TRUE(torch::equal(moved.src, batch.src));
  EXPECT_EQ(moved.tgt_tokens, batch.tgt_tokens);
  if (torch::cuda::is_available()) {
    const Batch on_gpu = batch.to(at::Device(at::kCUDA, 0));
    EXPECT_TRUE(on_gpu.src.is_cuda());
    EXPECT_TRUE(torch::equal(on_gpu.tgt_out.cpu(), batch.tgt_out));
  }
}

// Guards the protobuf clash described in ENVIRONMENT.md: a SentencePiece model trained and used in
// the same process that runs a LibTorch model.
TEST(Batching, SentencePieceAndLibTorchShareAProcess) {
  const std::filesystem::path fixtures = NMT_FIXTURES_DIR;
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  DataConfig data;
  data.vocab_size = 150;
  const Tokenizer tokenizer =
      Tokenizer::train(data, text.src, text.tgt, test::temp_dir("pipeline"));
  std::vector<Example> examples;
  for (size_t i = 0; i < 4; ++i) {
    examples.push_back({tokenizer.encode_src(text.src[i]), tokenizer.encode_tgt(text.tgt[i])});
  }
  const Batch batch = collate(examples, {0, 1, 2, 3});

  ModelConfig config;
  config.d_model = 32;
  config.n_heads = 2;
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.d_ff = 64;
  config.src_vocab_size = tokenizer.src_vocab_size();
  config.tgt_vocab_size = tokenizer.tgt_vocab_size();
  torch::manual_seed(1);
  Seq2Seq model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto logits = model->forward(batch.src, batch.tgt_in);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{4, batch.tgt_in.size(1), config.tgt_vocab_size}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

}  // namespace
}  // namespace nmt
