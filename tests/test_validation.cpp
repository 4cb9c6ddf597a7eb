// train/validation.cpp: validation loss, greedy BLEU/chrF and the metric direction.
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/special_ids.h"
#include "data/batching.h"
#include "data/dataset.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "train/validation.h"

namespace nmt {
namespace {

TEST(Validation, MetricDirection) {
  const double nan = std::nan("");
  EXPECT_TRUE(improves(Metric::kBleu, 20.0, nan));
  EXPECT_TRUE(improves(Metric::kBleu, 21.0, 20.0));
  EXPECT_FALSE(improves(Metric::kBleu, 19.0, 20.0));
  EXPECT_TRUE(improves(Metric::kLoss, 1.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, 2.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, nan, 2.0));
}

/// The fixture's validation split over the fixture tokenizer.
EncodedSplit valid_split() {
  return load_split(test::fixture_config().data, "tiny_val", test::fixture_tokenizer());
}

// The validation loss is LibTorch's cross-entropy (no smoothing) over every real target token of
// the split, padding ignored: computed here on the whole split as one padded batch, while
// validation batches it its own way (by decode.batch_tokens, several batches here).
TEST(Validation, LossIsCrossEntropyWithPaddingIgnored) {
  auto model = test::fixture_model(7);
  const auto split = valid_split();
  std::vector<size_t> all(split.examples.size());
  std::iota(all.begin(), all.end(), size_t{0});
  const Batch batch = collate(split.examples, all);
  ASSERT_GT(batch.tgt_out.eq(kPadId).sum().item<int64_t>(), 0);  // there is padding to ignore
  double expected = 0.0;
  {
    torch::NoGradGuard no_grad;
    const auto logits = model->forward(batch.src, batch.tgt_in);  // [rows, tgt_len, vocab]
    namespace F = torch::nn::functional;
    expected = F::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.tgt_out.reshape(-1),
                                F::CrossEntropyFuncOptions().ignore_index(kPadId))
                   .item<double>();
  }
  Config config = test::fixture_config();
  config.decode.batch_tokens = 100000;  // one batch of every pair: real padding
  for (const bool bleu : {false, true}) {
    config.train.valid_bleu = bleu;
    const auto result = validate(model, test::fixture_tokenizer(), split, config, at::kCPU);
    EXPECT_NEAR(result.loss, expected, 1e-6 * expected) << "valid_bleu " << bleu;
    EXPECT_DOUBLE_EQ(result.perplexity, std::exp(result.loss));
    EXPECT_EQ(std::isnan(result.bleu), !bleu);
  }
}

// Validation decodes greedily whatever decode.* asks: its BLEU and chrF are those of greedy
// translations (up to train.valid_max_len_offset), and the beam-4 MBR the decode section asks
// for would have scored otherwise on this model.
TEST(Validation, BleuIsGreedyWhateverTheDecodeSectionAsks) {
  auto model = test::fixture_model(7);
  const auto split = valid_split();
  Config config = test::fixture_config();
  config.train.valid_bleu = true;
  config.train.valid_max_len_offset = 6;
  apply_overrides(config, {"decode.beam=4", "decode.mbr=4", "decode.mbr_metric=chrf"});
  const auto result = validate(model, test::fixture_tokenizer(), split, config, at::kCPU);
  const auto scores = [&](const DecodeConfig& decode) {
    Translator translator(model, test::fixture_tokenizer(), decode, at::kCPU);
    const auto hyps = translator.translate_texts(split.src_text);
    return std::pair{corpus_bleu(hyps, split.tgt_text).score,
                     corpus_chrf(hyps, split.tgt_text).score};
  };
  DecodeConfig greedy;
  greedy.max_len_offset = 6;
  const auto [greedy_bleu, greedy_chrf] = scores(greedy);
  EXPECT_DOUBLE_EQ(result.bleu, greedy_bleu);
  EXPECT_DOUBLE_EQ(result.chrf, greedy_chrf);
  DecodeConfig mbr = config.decode;
  mbr.max_len_offset = 6;
  const auto mbr_chrf = scores(mbr).second;
  EXPECT_NE(result.chrf, mbr_chrf);
  EXPECT_GT(greedy_chrf, 0.0);
}

}  // namespace
}  // namespace nmt
