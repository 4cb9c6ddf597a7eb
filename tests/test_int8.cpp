// cpu/int8_linear.h and model/quantize.h: int8 decoding (decode.quantization = int8) follows the
// float model: the quantize and dequantize loops match their formulas, a layer's output stays
// within the quantization error of the float product, and a quantized model's log-probabilities
// follow the float model's.
#include <torch/torch.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "cpu/int8_linear.h"
#include "decode_test_util.h"
#include "model/quantize.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

#define SKIP_WITHOUT_INT8() \
  if (!cpu::int8_available()) GTEST_SKIP() << "built without oneDNN"

// CTranslate2's formula (its cpu::quantize_s8 with shift_to_uint8): a = qmax / max|row|, bytes
// round-half-even(x·a) + zero point, dequantized by 1 / a.
TEST(Int8, QuantizeRowsFollowsTheFormula) {
  torch::manual_seed(1);
  at::Tensor x = torch::randn({5, 37}) * 3.0;
  x[2].zero_();  // an all-zero row: scale 1, every byte the zero point
  // Halves: 2.5 and -0.5 go to the even 2 and 0 (half away from zero would give 3 and -1).
  x[3].zero_();
  x[3][0] = 127.0, x[3][1] = 2.5, x[3][2] = -0.5, x[3][3] = 63.0, x[3][4] = 1.5;
  for (auto [qmax, zero_point] : {std::pair{127, 128}, std::pair{63, 64}}) {
    std::vector<uint8_t> q(5 * 37);
    std::vector<float> scales(5);
    cpu::quantize_rows(x.data_ptr<float>(), 5, 37, qmax, zero_point, q.data(), scales.data());
    const at::Tensor max_abs = x.abs().amax({1});
    const at::Tensor a =
        at::where(max_abs > 0, at::full_like(max_abs, qmax) / max_abs, at::ones_like(max_abs));
    EXPECT_TRUE(torch::equal(torch::tensor(scales), at::ones_like(a) / a));
    const at::Tensor v = (x * a.unsqueeze(1)).clamp(-qmax, qmax);
    const at::Tensor expected = (at::round(v) + zero_point).to(at::kInt);  // half to even
    const at::Tensor got = torch::tensor(std::vector<int32_t>(q.begin(), q.end())).view({5, 37});
    EXPECT_TRUE(torch::equal(got, expected)) << "qmax " << qmax;
    EXPECT_EQ(got.max().item<int>(), qmax + zero_point);  // each row's largest |x| maps to qmax
  }
}

// The weights' integers are those nmt's CTranslate2 export writes (quantize_int8_rows: scale
// 127 / max|row|, half to even), so a layer computes Σ q_x·q_w / a / scale + bias exactly as
// CTranslate2 does on the exported model.
TEST(Int8, ALayerMultipliesTheIntegersTheExportWrites) {
  SKIP_WITHOUT_INT8();
  torch::manual_seed(4);
  at::Tensor w = torch::randn({6, 16}) * 0.1;
  // A row whose scale is 1 with halves in it: 2.5 -> 2, -0.5 -> 0, 1.5 -> 2 (half to even).
  w[1].zero_();
  w[1][0] = 127.0, w[1][1] = 2.5, w[1][2] = -0.5, w[1][3] = 1.5;
  const at::Tensor b = torch::randn({6});
  // 8-bit activations only where byte products are summed without int16 saturation (VNNI).
  if (cpu::Int8Linear(w, b).activation_bits() != 8) GTEST_SKIP() << "no VNNI: 7-bit activations";
  const cpu::Int8Linear layer(w, b, 8);
  const cpu::Quantized rows = cpu::quantize_int8_rows(w);
  EXPECT_EQ(rows.values[1][1].item<int>(), 2);
  EXPECT_EQ(rows.values[1][2].item<int>(), 0);
  const at::Tensor x = torch::randn({3, 16});
  const at::Tensor a = at::full({3}, 127.0) / x.abs().amax({1});
  const at::Tensor qx = at::round(x * a.unsqueeze(1));
  const at::Tensor sums = at::matmul(qx.to(at::kDouble), rows.values.to(at::kDouble).t());
  const at::Tensor expected =
      (sums / a.unsqueeze(1).to(at::kDouble) / rows.scale.to(at::kDouble) + b.to(at::kDouble))
          .to(at::kFloat);
  EXPECT_TRUE(torch::allclose(layer.forward(x), expected, 1e-5, 1e-5))
      << (layer.forward(x) - expected).abs().max().item<float>();
}

TEST(Int8, DequantizeRowsFollowsTheFormula) {
  const at::Tensor sums = torch::randint(-100000, 100000, {3, 7}, at::kInt);
  const at::Tensor row = torch::rand({3}) + 0.1, col = torch::rand({7}) + 0.1;
  const at::Tensor bias = torch::randn({7});
  at::Tensor y = at::empty({3, 7});
  cpu::dequantize_rows(sums.data_ptr<int32_t>(), 3, 7, row.data_ptr<float>(), col.data_ptr<float>(),
                       bias.data_ptr<float>(), y.data_ptr<float>());
  const at::Tensor expected = sums.to(at::kFloat) * row.unsqueeze(1) * col + bias;
  EXPECT_TRUE(torch::allclose(y, expected, 1e-6, 1e-3));
  cpu::dequantize_rows(sums.data_ptr<int32_t>(), 3, 7, row.data_ptr<float>(), col.data_ptr<float>(),
                       nullptr, y.data_ptr<float>());
  EXPECT_TRUE(torch::allclose(y, expected - bias, 1e-6, 1e-3));
  // The activations' zero point, taken off each column before the scales.
  const at::Tensor offsets = torch::randint(-5000, 5000, {7}, at::kInt);
  cpu::dequantize_rows(sums.data_ptr<int32_t>(), 3, 7, row.data_ptr<float>(), col.data_ptr<float>(),
                       bias.data_ptr<float>(), y.data_ptr<float>(), offsets.data_ptr<int32_t>());
  const at::Tensor shifted = (sums - offsets).to(at::kFloat) * row.unsqueeze(1) * col;
  EXPECT_TRUE(torch::allclose(y, shifted + bias, 1e-6, 1e-3));
  cpu::dequantize_rows(sums.data_ptr<int32_t>(), 3, 7, row.data_ptr<float>(), col.data_ptr<float>(),
                       nullptr, y.data_ptr<float>(), offsets.data_ptr<int32_t>());
  EXPECT_TRUE(torch::allclose(y, shifted, 1e-6, 1e-3));
}

// Within the quantization error: each product term is off by at most half a step of either
// factor, so |y - x·wᵀ| <= Σ_k (|x_k|·s_w + |w_k|·s_x) / 2 + s_x·s_w / 4 per element.
TEST(Int8, ALayerStaysWithinTheQuantizationErrorOfTheFloatProduct) {
  SKIP_WITHOUT_INT8();
  torch::manual_seed(2);
  const at::Tensor w = torch::randn({48, 40}) * 0.1, b = torch::randn({48});
  const at::Tensor x = torch::randn({2, 3, 40});
  for (int bits : {7, 8}) {
    // 8-bit activations only where the CPU sums byte products without int16 saturation (VNNI),
    // which is where the layer chooses them itself.
    if (bits == 8 && cpu::Int8Linear(w, b).activation_bits() != 8) continue;
    const cpu::Int8Linear layer(w, b, bits);
    EXPECT_EQ(layer.activation_bits(), bits);
    const at::Tensor y = layer.forward(x);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 48}));
    const at::Tensor ref = at::linear(x, w, b);
    const at::Tensor x2 = x.reshape({6, 40});
    const at::Tensor s_x = x2.abs().amax({1}, true) / (bits == 8 ? 127.0 : 63.0);  // [6, 1]
    const at::Tensor s_w = w.abs().amax({1}) / 127.0;                              // [48]
    const at::Tensor bound = (at::matmul(x2.abs(), w.abs().t().sign()) * s_w +
                              at::matmul(s_x * at::ones({6, 40}), w.abs().t())) /
                                 2 +
                             s_x * s_w / 4;
    const at::Tensor error = (y.reshape({6, 48}) - ref.reshape({6, 48})).abs();
    EXPECT_TRUE((error <= bound * 1.001 + 1e-5).all().item<bool>())
        << bits << " bits: worst error " << (error - bound).max().item<float>() << " over";
    EXPECT_LT(error.max().item<float>(), 0.05 * ref.abs().max().item<float>());
  }
  EXPECT_EQ(cpu::Int8Linear(w, b).forward(at::empty({0, 40})).sizes(),
            (std::vector<int64_t>{0, 48}));
}

TEST(Int8, ThreadsShareOneLayer) {
  SKIP_WITHOUT_INT8();
  torch::manual_seed(3);
  const cpu::Int8Linear layer(torch::randn({64, 32}), torch::randn({64}));
  std::vector<at::Tensor> inputs, serial(4), parallel(4);
  for (int i = 0; i < 4; ++i) inputs.push_back(torch::randn({5 + i, 32}));
  for (int i = 0; i < 4; ++i) serial[i] = layer.forward(inputs[i]);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      at::set_num_threads(1);
      for (int repeat = 0; repeat < 20; ++repeat) parallel[i] = layer.forward(inputs[i]);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(torch::equal(serial[i], parallel[i])) << i;
}

// Every linear layer, the tied output projection included, gets int8 weights, and the model's
// next-token log-probabilities stay close to the float model's.
TEST(Int8, AQuantizedModelFollowsTheFloatModel) {
  SKIP_WITHOUT_INT8();
  torch::NoGradGuard no_grad;
  Seq2Seq model = test::fixture_model(7);
  model->eval();
  const at::Tensor src = torch::randint(4, 60, {3, 9}, at::kLong);
  const at::Tensor tgt = torch::randint(4, 60, {3, 6}, at::kLong);
  const at::Tensor reference = at::log_softmax(model->forward(src, tgt), -1);
  const std::string what = quantize_int8(model);
  EXPECT_NE(what.find("int8 weights for "), std::string::npos) << what;
  EXPECT_TRUE(bool(model->decoder->tied_twin) || bool(model->decoder->output->twin));
  const at::Tensor quantized = at::log_softmax(model->forward(src, tgt), -1);
  const at::Tensor p = reference.exp();
  // KL(float || int8) per position, and the same best token at nearly every position.
  const double kl = (p * (reference - quantized)).sum(-1).max().item<double>();
  EXPECT_LT(kl, 0.01) << what;
  const double agree =
      (reference.argmax(-1) == quantized.argmax(-1)).to(at::kFloat).mean().item<double>();
  EXPECT_GE(agree, 0.9);
  EXPECT_FALSE(torch::equal(reference, quantized));  // it is not the float model again
}

// CTranslate2 keeps embedding tables in int8 and looks tokens up as q · (1 / scale): a model
// quantized for int8 decoding holds those values, the integers its export writes.
TEST(Int8, AQuantizedModelLooksTokensUpAsCTranslate2Does) {
  SKIP_WITHOUT_INT8();
  torch::NoGradGuard no_grad;
  Seq2Seq model = test::fixture_model(7);
  const at::Tensor table = model->decoder->embeddings->token_weight().clone();
  const at::Tensor source_table = model->encoder->embeddings->token_weight().clone();
  const cpu::Quantized rows = cpu::quantize_int8_rows(table);
  quantize_int8(model);
  const at::Tensor looked_up = model->decoder->embeddings->token_weight();
  EXPECT_TRUE(torch::equal(looked_up, rows.values.to(at::kFloat) *
                                          (at::ones_like(rows.scale) / rows.scale).unsqueeze(1)));
  EXPECT_FALSE(torch::equal(looked_up, table));
  // The encoder's table too (quantized once when it is the decoder's).
  EXPECT_TRUE(torch::equal(model->encoder->embeddings->token_weight(),
                           cpu::dequantize_int8_rows(cpu::quantize_int8_rows(source_table))));
  // Quantizing the dequantized table again gives back the same integers (the tied projection's).
  EXPECT_TRUE(torch::equal(cpu::quantize_int8_rows(looked_up).values, rows.values));
}

TEST(Int8, TranslateTakesQuantizationAndNamesABadValue) {
  SKIP_WITHOUT_INT8();
  const auto dir = test::temp_dir("int8_cli");
  const std::string base =
      "translate --device cpu --checkpoint " + test::save_fixture_checkpoint(dir).string();
  const auto run = test::run_nmt(base + " --quantization int8", "a dog .\ntwo men .\n", dir);
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2) << run.out;
  const auto bad = test::run_nmt(base + " --quantization int4", "a dog .\n", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: --quantization 'int4' is not valid: choose one of none, int8\n");
}

}  // namespace
}  // namespace nmt
