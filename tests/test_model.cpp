#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/special_ids.h"
#include "model/embeddings.h"
#include "model/seq2seq.h"
#include "test_util.h"

namespace nmt {
namespace {

ModelConfig small_config() {
  ModelConfig c;
  c.d_model = 16;
  c.n_heads = 2;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.d_ff = 32;
  c.max_len = 20;
  c.src_vocab_size = 23;
  c.tgt_vocab_size = 29;
  return c;
}

/// Closed-form parameter count of the architecture (biases included).
int64_t expected_parameters(const ModelConfig& c) {
  const int64_t d = c.d_model, f = c.d_ff;
  const int64_t attention = 4 * (d * d + d), ffn = d * f + f + f * d + d, norm = 2 * d;
  const int64_t encoder_layer = attention + ffn + 2 * norm;
  const int64_t decoder_layer = 2 * attention + ffn + 3 * norm;
  const int64_t positions = c.positions == Positions::kLearned ? c.max_len * d : 0;
  const int64_t final_norms = c.norm == Norm::kPre ? 2 * norm : 0;
  return c.src_vocab_size * d + positions + c.encoder_layers * encoder_layer +  // encoder
         c.tgt_vocab_size * d + positions + c.decoder_layers * decoder_layer +  // decoder
         d * c.tgt_vocab_size + c.tgt_vocab_size + final_norms;                 // output
}

TEST(Model, ParameterCountMatchesClosedForm) {
  ModelConfig c = small_config();
  EXPECT_EQ(count_parameters(*Seq2Seq(c)), expected_parameters(c));
  c.positions = Positions::kSinusoidal;
  c.norm = Norm::kPre;
  EXPECT_EQ(count_parameters(*Seq2Seq(c)), expected_parameters(c));
}

TEST(Model, SharingAndTyingRemoveExactlyTheSharedMatrices) {
  ModelConfig c = small_config();
  c.tgt_vocab_size = c.src_vocab_size;
  const int64_t base = count_parameters(*Seq2Seq(c));
  const int64_t matrix = c.tgt_vocab_size * c.d_model;
  c.share_embeddings = true;
  EXPECT_EQ(count_parameters(*Seq2Seq(c)), base - matrix);
  c.tie_output = true;
  EXPECT_EQ(count_parameters(*Seq2Seq(c)), base - 2 * matrix);
  c.share_embeddings = false;
  Seq2Seq tied(c);
  EXPECT_EQ(count_parameters(*tied), base - matrix);
  // Tied: the projection really reads the target embedding.
  EXPECT_EQ(tied->decoder->embeddings->token_weight().data_ptr(),
            tied->decoder->embeddings->tokens->weight.data_ptr());
  // parameters() lists every tensor once, so the optimizer never updates one twice.
  c.share_embeddings = true;
  Seq2Seq shared(c);
  EXPECT_EQ(shared->parameters().size(), shared->named_parameters().size());
  int64_t listed = 0;
  for (const auto& p : shared->parameters()) listed += p.numel();
  EXPECT_EQ(listed, count_parameters(*shared));
}

TEST(Model, SinusoidalPositionsEqualTheFormula) {
  const int64_t len = 7, d = 6;
  const auto table = sinusoidal_positions(len, d);
  for (int64_t pos = 0; pos < len; ++pos) {
    for (int64_t i = 0; i < d; ++i) {
      const double angle = pos / std::pow(10000.0, double(2 * (i / 2)) / d);
      const double expected = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
      EXPECT_NEAR(table[pos][i].item<double>(), expected, 1e-5) << pos << "," << i;
    }
  }
}

TEST(Model, WordDropoutZeroesWholeTokensInTrainingOnly) {
  torch::manual_seed(3);
  const int64_t d = 8;
  Embeddings plain(11, d, 16, Positions::kSinusoidal, 0.0);
  Embeddings dropped(11, d, 16, Positions::kSinusoidal, 0.0, 0.5, plain->tokens);
  const auto ids = torch::randint(0, 11, {6, 12}, torch::kLong);
  const auto positions = sinusoidal_positions(12, d).unsqueeze(0);
  const auto token_part = plain->forward(ids) - positions;  // [6, 12, d]

  dropped->train();
  const auto out = dropped->forward(ids) - positions;
  // Each token's scale (0 or 1/(1-p)) by least squares, then the whole vector must match it.
  const auto per_token = (out * token_part).sum(2) / token_part.pow(2).sum(2);  // [6, 12]
  EXPECT_TRUE(torch::allclose(out, token_part * per_token.unsqueeze(2), 1e-4, 1e-5))
      << "a token is dropped whole or kept whole";
  const auto is_dropped = per_token.abs() < 1e-4;
  EXPECT_TRUE(torch::allclose(per_token.masked_fill(is_dropped, 2.0),
                              torch::full_like(per_token, 2.0), 1e-4, 1e-5))
      << "kept tokens are scaled by 1/(1-p)";
  const int64_t n_dropped = is_dropped.sum().item<int64_t>();
  EXPECT_GT(n_dropped, 12);  // 72 tokens at p = 0.5: 36 expected
  EXPECT_LT(n_dropped, 60);

  dropped->eval();
  EXPECT_TRUE(torch::equal(dropped->forward(ids), plain->forward(ids)));
}

TEST(Model, LearnedPositionsRejectLongSequences) {
  Seq2Seq model(small_config());
  auto src = torch::ones({1, 21}, torch::kLong);
  auto tgt = torch::ones({1, 3}, torch::kLong);
  test::expect_error([&] { model->forward(src, tgt); }, "exceeds model.max_len = 20");
}

TEST(Model, DecoderIsCausal) {
  torch::manual_seed(1);
  for (const char* norm : {"post", "pre"}) {
    ModelConfig c = small_config();
    c.norm = require_choice<Norm>("norm", norm);
    Seq2Seq model(c);
    model->eval();
    auto src = torch::randint(4, 23, {2, 6}, torch::kLong);
    auto tgt = torch::randint(4, 29, {2, 8}, torch::kLong);
    auto changed = tgt.clone();
    const int64_t t = 4;
    changed.slice(1, t + 1) = torch::randint(4, 29, {2, 8 - t - 1}, torch::kLong);
    auto a = model->forward(src, tgt), b = model->forward(src, changed);
    EXPECT_TRUE(torch::allclose(a.slice(1, 0, t + 1), b.slice(1, 0, t + 1), 1e-5, 1e-6)) << norm;
    EXPECT_FALSE(torch::allclose(a.slice(1, t + 1), b.slice(1, t + 1), 1e-5, 1e-6)) << norm;
  }
}

TEST(Model, SourcePaddingDoesNotChangeOutputs) {
  torch::manual_seed(2);
  Seq2Seq model(small_config());
  model->eval();
  auto src = torch::tensor({5, 6, 7, 3}, torch::kLong).reshape({1, 4});
  auto padded = torch::tensor({5, 6, 7, 3, 0, 0}, torch::kLong).reshape({1, 6});
  auto tgt = torch::tensor({2, 9, 10}, torch::kLong).reshape({1, 3});
  EXPECT_TRUE(torch::allclose(model->forward(src, tgt), model->forward(padded, tgt), 1e-5, 1e-6));
}

TEST(Model, IncrementalStepsEqualTheFullDecoder) {
  torch::manual_seed(3);
  for (const char* norm : {"post", "pre"}) {
    ModelConfig c = small_config();
    c.norm = require_choice<Norm>("norm", norm);
    Seq2Seq model(c);
    model->eval();
    torch::NoGradGuard no_grad;
    auto src = torch::randint(4, 23, {3, 5}, torch::kLong);
    auto tgt = torch::randint(4, 29, {3, 6}, torch::kLong);
    const auto src_mask = model->make_src_mask(src);
    const auto memory = model->encode(src, src_mask);
    const auto full = model->decoder->hidden(tgt, memory, model->make_tgt_mask(tgt), src_mask);
    auto cache = model->decoder->start(memory);
    std::vector<at::Tensor> steps;
    steps.push_back(model->decoder->step(tgt.slice(1, 0, 2), cache, src_mask).hidden);
    for (int64_t i = 2; i < 6; ++i) {
      steps.push_back(model->decoder->step(tgt.slice(1, i, i + 1), cache, src_mask).hidden);
    }
    EXPECT_TRUE(torch::allclose(torch::cat(steps, 1), full.hidden, 1e-5, 1e-5)) << norm;
  }
}

TEST(Model, GroupedRowsShareTheirSourceAndGiveWhatCopiesGive) {
  // DecoderCache::group: 3 sources decoded in 2 rows each, attending to one copy of each
  // source's encoder output, give the hidden states and attention weights of 6 rows that each
  // hold a copy; and a select that drops a source keeps the two in step.
  torch::manual_seed(5);
  Seq2Seq model(small_config());
  model->eval();
  torch::NoGradGuard no_grad;
  auto src = torch::randint(4, 23, {3, 5}, torch::kLong);
  src[1][4] = kPadId;  // a shorter source: the mask matters
  auto tgt = torch::randint(4, 29, {6, 4}, torch::kLong);
  const auto src_mask = model->make_src_mask(src);
  const auto memory = model->encode(src, src_mask);
  const auto rows = torch::arange(3, torch::kLong).repeat_interleave(2);
  auto copies = model->decoder->start(memory);
  copies.select(rows);
  auto grouped = model->decoder->start(memory);
  grouped.group = 2;
  const auto copies_mask = src_mask.index_select(0, rows);
  for (int64_t i = 0; i < 4; ++i) {
    const auto token = tgt.slice(1, i, i + 1);
    const auto a = model->decoder->step(token, copies, copies_mask, /*need_weights=*/true);
    const auto b = model->decoder->step(token, grouped, src_mask, /*need_weights=*/true);
    EXPECT_TRUE(torch::allclose(a.hidden, b.hidden, 1e-5, 1e-6)) << "step " << i;
    EXPECT_TRUE(torch::allclose(a.attention.back(), b.attention.back(), 1e-5, 1e-6)) << i;
  }
  // Source 1 leaves; the others' rows swap within their groups.
  const auto keep = torch::tensor({1, 0, 4, 4}, torch::kLong);
  copies.select(keep);
  grouped.select(keep);
  const auto kept_sources = torch::tensor({0, 2}, torch::kLong);
  const auto a = model->decoder->step(tgt.slice(1, 0, 1).index_select(0, keep), copies,
                                      copies_mask.index_select(0, keep));
  const auto b = model->decoder->step(tgt.slice(1, 0, 1).index_select(0, keep), grouped,
                                      src_mask.index_select(0, kept_sources));
  EXPECT_TRUE(torch::allclose(a.hidden, b.hidden, 1e-5, 1e-6));
}

TEST(Model, GradientsReachEveryParameterAndTrainingReducesLoss) {
  torch::manual_seed(4);
  ModelConfig c = small_config();
  c.dropout = 0.0;
  c.attention_dropout = 0.0;
  Seq2Seq model(c);
  auto src = torch::randint(4, 23, {4, 6}, torch::kLong);
  auto tgt = torch::randint(4, 29, {4, 7}, torch::kLong);
  auto tgt_in = tgt.slice(1, 0, 6), tgt_out = tgt.slice(1, 1);
  auto loss_of = [&] {
    auto logits = model->forward(src, tgt_in);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, 29}), tgt_out.reshape(-1));
  };
  auto loss = loss_of();
  loss.backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const double first = loss.item<double>();
  for (int i = 0; i < 40; ++i) {
    adam.zero_grad();
    auto l = loss_of();
    l.backward();
    adam.step();
  }
  EXPECT_LT(loss_of().item<double>(), 0.5 * first);
}

}  // namespace
}  // namespace nmt
