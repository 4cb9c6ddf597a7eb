// The hand-written CPU kernels against their references: the fused label-smoothed
// cross-entropy and symmetric KL (train/loss.cpp), the fused Adam/AdamW step
// (train/optimizer.cpp), the hash dropout masks with their bf16 conversions
// (model/dropout.cpp), attention for inference and its batched products in training
// (model/attention.cpp) and beam search's top
// candidates (decode/beam_search.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config.h"
#include "core/precision.h"
#include "cpu/kernels.h"
#include "cpu/vectorize.h"
#include "model/attention.h"
#include "model/dropout.h"
#include "optimizer_test_util.h"
#include "train/loss.h"
#include "train/optimizer.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

// The fused CPU kernel against the composite ATen version: values and gradients, fp32 and bf16
// logits, rows longer than the kernel's 16 lanes with a ragged tail, and extreme logits.
TEST(CpuKernels, FusedCrossEntropyMatchesTheReference) {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const double eps : {0.0, 0.1}) {
      auto base = 4.0 * torch::randn({37, 1003});
      base[5][17] = 80.0;  // a dominant logit must not overflow
      base[6].fill_(-60.0);
      const auto targets = torch::randint(0, 1003, {37}, torch::kLong);
      const auto fused_in = base.to(dtype).requires_grad_(true);
      const auto reference_in = base.to(dtype).to(torch::kFloat).requires_grad_(true);
      const auto fused = label_smoothed_cross_entropy(fused_in, targets, eps);
      const auto reference = label_smoothed_cross_entropy_reference(reference_in, targets, eps);
      EXPECT_NEAR(fused.loss.item<double>(), reference.loss.item<double>(),
                  1e-5 * std::abs(reference.loss.item<double>()));
      EXPECT_NEAR(fused.nll.item<double>(), reference.nll.item<double>(),
                  1e-5 * std::abs(reference.nll.item<double>()));
      (fused.loss / 37.0).backward();
      (reference.loss / 37.0).backward();
      ASSERT_EQ(fused_in.grad().scalar_type(), dtype);
      const double tolerance = dtype == torch::kFloat ? 1e-6 : 2e-4;
      EXPECT_LT(
          (fused_in.grad().to(torch::kFloat) - reference_in.grad()).abs().max().item<double>(),
          tolerance);
    }
  }
}

TEST(CpuKernels, FusedCrossEntropyRejectsOutOfRangeTargets) {
  const auto logits = torch::zeros({2, 5});
  EXPECT_THROW(label_smoothed_cross_entropy(logits, torch::tensor({0, 5}, torch::kLong), 0.1),
               c10::Error);
}

// The fused symmetric KL against the reference: values and gradients, fp32 and bf16, rows
// longer than 16 lanes with a ragged tail, and extreme logits.
TEST(CpuKernels, FusedSymmetricKlMatchesTheReference) {
  torch::manual_seed(4);
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    auto base = 4.0 * torch::randn({2 * 19, 1003});
    base[3][17] = 80.0;  // a dominant logit must not overflow
    base[19 + 4].fill_(-60.0);
    const auto fused_in = base.to(dtype).requires_grad_(true);
    const auto reference_in = base.to(dtype).to(torch::kFloat).requires_grad_(true);
    const auto fused = symmetric_kl_sum(fused_in);
    const auto reference = symmetric_kl_sum_reference(reference_in);
    EXPECT_NEAR(fused.item<double>(), reference.item<double>(), 1e-5 * reference.item<double>());
    (fused / 19.0).backward();
    (reference / 19.0).backward();
    ASSERT_EQ(fused_in.grad().scalar_type(), dtype);
    const double tolerance = dtype == torch::kFloat ? 1e-6 : 5e-4;
    EXPECT_LT((fused_in.grad().to(torch::kFloat) - reference_in.grad()).abs().max().item<double>(),
              tolerance);
  }
}

/// The fused step against LibTorch's own: three steps on the same gradients (scaled by a clip
/// factor), then LibTorch's step continues the fused optimizer's state (same state keys and
/// layout, so checkpoints and resume are unaffected).
void expect_fused_step_matches_libtorch(double weight_decay, const std::string& decay_on) {
  TrainConfig config;
  config.lr = 1e-2;
  config.weight_decay = weight_decay;
  config.weight_decay_on = require_choice<DecayOn>("weight_decay_on", decay_on);
  auto fused_named = adam_parameters();
  auto reference_named = clones(fused_named);
  auto fused = make_optimizer(fused_named, config);
  auto reference = make_optimizer(reference_named, config);
  auto fused_parameters = fused_named.values();
  auto reference_parameters = reference_named.values();
  const double scale = 0.37;
  for (int step = 0; step < 4; ++step) {
    for (size_t i = 0; i < fused_parameters.size(); ++i) {
      const auto grad = torch::randn_like(fused_parameters[i]) * (step + 1);
      fused_parameters[i].mutable_grad() = grad.clone();
      reference_parameters[i].mutable_grad() = grad * scale;
    }
    if (step < 3) {
      optimizer_step(*fused, scale);
    } else {
      for (auto& p : fused_parameters) p.mutable_grad().mul_(scale);
      fused->step();  // LibTorch's step on the state the fused steps left
    }
    reference->step();
    for (size_t i = 0; i < fused_parameters.size(); ++i) {
      EXPECT_TRUE(torch::allclose(fused_parameters[i], reference_parameters[i], 1e-5, 1e-7))
          << "step " << step + 1 << ", parameter " << i << ", max difference "
          << (fused_parameters[i] - reference_parameters[i]).abs().max().item<float>();
    }
  }
  EXPECT_EQ(fused->state().size(), fused_parameters.size());  // no second, fresh state
}

TEST(CpuKernels, FusedAdamMatchesLibTorch) { expect_fused_step_matches_libtorch(0.0, "all"); }

TEST(CpuKernels, FusedAdamWMatchesLibTorch) { expect_fused_step_matches_libtorch(0.1, "all"); }

TEST(CpuKernels, FusedAdamWWithExemptGroupMatchesLibTorch) {
  expect_fused_step_matches_libtorch(0.1, "linear");
}

TEST(CpuKernels, HashDropoutKeepsTheRightFractionAndScales) {
  torch::manual_seed(0);
  const auto x = torch::ones({1000, 1001});
  const auto y = hash_dropout(x, 0.3, 12345);
  const auto kept = y.ne(0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.7, 0.003);
  EXPECT_NEAR(y.max().item<double>(), 1.0 / 0.7, 1e-6);
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.005);  // inverted dropout keeps the expectation
  // Neighbouring elements are independent: P(both kept) = 0.49.
  const auto a = y.reshape(-1).slice(0, 0, -1).ne(0), b = y.reshape(-1).slice(0, 1).ne(0);
  EXPECT_NEAR(a.logical_and(b).to(torch::kDouble).mean().item<double>(), 0.49, 0.004);
  // Another seed gives another mask; the same seed the same mask.
  EXPECT_FALSE(torch::equal(y, hash_dropout(x, 0.3, 54321)));
  EXPECT_TRUE(torch::equal(y, hash_dropout(x, 0.3, 12345)));
}

TEST(CpuKernels, HashDropoutGradientUsesTheForwardMask) {
  const auto x = torch::randn({64, 33}).requires_grad_(true);
  const auto y = hash_dropout(x, 0.25, 7);
  const auto upstream = torch::randn({64, 33});
  (y * upstream).sum().backward();
  const auto mask = y.ne(0).to(torch::kFloat);
  EXPECT_TRUE(torch::allclose(x.grad(), upstream * mask / 0.75));
}

TEST(CpuKernels, HashDropoutBfloat16UsesTheFloatMaskAndRounding) {
  // The bf16 kernel works on raw bits; it must drop the same elements as the float one and
  // round the kept ones as c10::BFloat16 does. Odd length: the vector loops' tails count too.
  const auto x = torch::randn({1000, 37});
  const auto reference = hash_dropout(x.to(torch::kBFloat16).to(torch::kFloat), 0.1, 99);
  const auto got = hash_dropout(x.to(torch::kBFloat16), 0.1, 99);
  EXPECT_EQ(got.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(got, reference.to(torch::kBFloat16)));
  EXPECT_NEAR(got.eq(0).to(torch::kDouble).mean().item<double>(), 0.1, 0.005);
  // double takes the generic path: the same elements dropped, kept ones scaled by 1/(1-p).
  const auto as_double = hash_dropout(x.to(torch::kDouble), 0.1, 99);
  EXPECT_TRUE(torch::equal(as_double.ne(0), hash_dropout(x, 0.1, 99).ne(0)));
  EXPECT_TRUE(torch::allclose(as_double, x.to(torch::kDouble) * as_double.ne(0) / 0.9));
}

// The bf16 helpers against c10::BFloat16: widening is exact, narrowing rounds to nearest even,
// over a sweep of bit patterns (NaN excepted: the kernels only promise it stays non-finite).
TEST(CpuKernels, Bf16ConversionMatchesC10) {
  for (uint32_t bits = 0; bits < 0xFFFFFFFFu - 0x10001u; bits += 0x10001u) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    if (std::isnan(value)) continue;
    const c10::BFloat16 reference(value);
    ASSERT_EQ(cpu::float_to_bf16(value), reference.x) << "bits " << bits;
    ASSERT_EQ(cpu::bf16_to_float(reference.x), static_cast<float>(reference)) << "bits " << bits;
  }
}

// exp_nonpositive against std::exp in double precision: relative error below 5e-6 over the
// whole range (the worst near the clamp, where results approach float's smallest normal
// numbers; 3.9e-6 measured), below 1e-6 over [-10, 0] where the softmax mass lies (6.1e-7);
// clamped at -87.
TEST(CpuKernels, ExpNonpositiveIsCloseToStdExp) {
  double worst = 0.0, worst_near_zero = 0.0;
  for (float x = -87.0f; x <= 0.0f; x += 0.001f) {
    const double error = std::abs(double(cpu::exp_nonpositive(x)) / std::exp(double(x)) - 1.0);
    worst = std::max(worst, error);
    if (x >= -10.0f) worst_near_zero = std::max(worst_near_zero, error);
  }
  EXPECT_LT(worst, 5e-6);
  EXPECT_LT(worst_near_zero, 1e-6);
  EXPECT_EQ(cpu::exp_nonpositive(-1000.0f), cpu::exp_nonpositive(-87.0f));
}

/// softmax(q·kᵀ·scale, where mask)·v in LibTorch's ops, heads concatenated: [B, Q, H·D].
torch::Tensor attention_reference(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v, const torch::Tensor& mask, double scale,
                                  torch::Tensor* weights) {
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  if (mask.defined()) scores = scores.masked_fill(mask.logical_not(), -INFINITY);
  *weights = torch::softmax(scores, -1);
  const auto context = torch::matmul(*weights, v);  // [B, H, Q, D]
  return context.transpose(1, 2).reshape({q.size(0), q.size(2), q.size(1) * q.size(3)});
}

// One query (a decoding step) and several (the encoder, a beam's rows together), keys as the
// transposed views split_heads makes, a head size with a ragged tail after the 16 lanes, and
// masks broadcast over heads and queries (padding) or over the batch (causal).
TEST(CpuKernels, AttentionForInferenceMatchesTheReference) {
  torch::manual_seed(5);
  torch::NoGradGuard no_grad;
  for (const int64_t dim : {64, 20}) {
    for (const int64_t queries : {1, 7}) {
      const int64_t batch = 3, heads = 4, keys = 9;
      const auto q = torch::randn({batch, queries, heads, dim}).transpose(1, 2);
      const auto k = torch::randn({batch, keys, heads, dim}).transpose(1, 2);
      const auto v = torch::randn({batch, heads, keys, dim});
      auto padding = torch::ones({batch, 1, 1, keys}, torch::kBool);
      padding[1].narrow(-1, 5, 4).fill_(false);
      const auto causal = torch::ones({1, 1, queries, keys}, torch::kBool).tril(keys - queries);
      for (const auto& mask : {torch::Tensor(), padding, causal}) {
        ASSERT_TRUE(cpu::attention_takes(q, k, v, mask));
        torch::Tensor weights, expected_weights;
        const auto context = cpu::attention_inference(q, k, v, mask, 0.125, &weights);
        const auto expected = attention_reference(q, k, v, mask, 0.125, &expected_weights);
        EXPECT_TRUE(torch::allclose(context, expected, 1e-5, 1e-5))
            << "dim " << dim << " queries " << queries << " mask " << mask.defined();
        EXPECT_TRUE(torch::allclose(weights, expected_weights, 1e-5, 1e-6));
        EXPECT_TRUE(torch::equal(cpu::attention_inference(q, k, v, mask, 0.125, nullptr), context));
      }
    }
  }
  // Not for training (a gradient to record) nor for other dtypes: the reference path runs.
  const auto x = torch::randn({1, 1, 2, 8});
  EXPECT_FALSE(cpu::attention_takes(x.to(torch::kBFloat16), x, x, {}));
  torch::AutoGradMode grad(true);
  EXPECT_FALSE(cpu::attention_takes(x, x, x, {}));
}

// Attention's batched products as the layer meets them (heads split off a [B, L, H, D] tensor,
// keys transposed, a square [B, H, L, L] weight matrix) and a contiguous one: values and both
// gradients as at::matmul gives them; what it does not take goes to at::matmul.
TEST(CpuKernels, BatchedMatmulMatchesMatmulWithItsGradients) {
  torch::manual_seed(9);
  const int64_t batch = 3, heads = 4, queries = 5, keys = 7, dim = 16;
  const auto q = torch::randn({batch, queries, heads, dim}).transpose(1, 2);
  const auto k = torch::randn({batch, keys, heads, dim}).transpose(1, 2);
  const auto w = torch::randn({batch, heads, queries, keys});
  const auto v = torch::randn({batch, keys, heads, dim}).transpose(1, 2);
  const std::vector<std::pair<at::Tensor, at::Tensor>> products = {
      {q, k.transpose(-2, -1)}, {w, v}, {w.contiguous(), v.contiguous()}};
  for (const auto& [a0, b0] : products) {
    ASSERT_TRUE(cpu::batched_matmul_takes(a0, b0)) << a0.strides() << " " << b0.strides();
    const auto a = a0.detach().requires_grad_(), b = b0.detach().requires_grad_();
    const auto ra = a0.detach().requires_grad_(), rb = b0.detach().requires_grad_();
    const auto c = attention_matmul(a, b), reference = at::matmul(ra, rb);
    EXPECT_TRUE(torch::allclose(c, reference, 1e-5, 1e-5)) << a0.sizes() << " " << b0.sizes();
    const auto grad = torch::randn_like(reference);
    c.backward(grad);
    reference.backward(grad);
    EXPECT_TRUE(torch::allclose(a.grad(), ra.grad(), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(b.grad(), rb.grad(), 1e-5, 1e-5));
  }
  const auto x = torch::randn({2, 3, 4});
  {
    AutocastGuard bf16(Precision::kBf16, at::kCPU);  // bf16 training: at::matmul's bf16 product
    EXPECT_EQ(attention_matmul(x, x.transpose(1, 2)).scalar_type(), at::kBFloat16);
  }
  EXPECT_FALSE(cpu::batched_matmul_takes(x.to(torch::kBFloat16), x.transpose(1, 2)));
  EXPECT_TRUE(cpu::batched_matmul_takes(x, x.transpose(1, 2)));
  EXPECT_FALSE(cpu::batched_matmul_takes(x, x.transpose(1, 2).slice(0, 0, 1)));  // broadcast
  EXPECT_FALSE(cpu::batched_matmul_takes(x, x));                       // 4 columns against 3 rows
  const auto every_other = torch::randn({2, 4, 6}).slice(2, 0, 6, 2);  // no unit stride
  EXPECT_TRUE(at::matmul(x, every_other).defined());
  EXPECT_FALSE(cpu::batched_matmul_takes(x, every_other));
}

// The layer gives the same output through the kernel (eval, no gradient) as through its
// LibTorch path (eval, recording gradients).
TEST(CpuKernels, AttentionLayerGivesTheSameOutputWithTheKernel) {
  torch::manual_seed(6);
  MultiHeadAttention attention(32, 4, 0.1);
  attention->eval();
  const auto query = torch::randn({2, 3, 32}), memory = torch::randn({2, 5, 32});
  auto mask = torch::ones({2, 1, 1, 5}, torch::kBool);
  mask[0].narrow(-1, 3, 2).fill_(false);
  const auto [reference, reference_weights] = attention->forward(query, memory, memory, mask);
  torch::NoGradGuard no_grad;
  const auto [fast, fast_weights] = attention->forward(query, memory, memory, mask);
  EXPECT_TRUE(torch::allclose(fast, reference.detach(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(fast_weights, reference_weights.detach(), 1e-5, 1e-6));
}

// Beam search's candidates: the top k of live + log-probs over each group's rows, as the tensor
// sum and topk give them (values and ids), with a group's rows not yet live (-inf, the first
// step) and pad/bos excluded (-inf), over a vocabulary that is not a multiple of the chunks.
TEST(CpuKernels, GroupedTopKMatchesTheTensorTopK) {
  torch::manual_seed(7);
  const int64_t beam = 4, vocab = 1003, k = 2 * beam;
  const auto log_probs = torch::log_softmax(3.0 * torch::randn({3 * beam, vocab}), -1);
  log_probs.select(1, 0).fill_(-INFINITY);
  log_probs.select(1, 2).fill_(-INFINITY);
  std::vector<double> live(3 * beam);
  for (auto& score : live) score = -10.0 * torch::rand({1}).item<double>();
  for (int64_t r = 1; r < beam; ++r) live[r] = -INFINITY;  // the first group's first step
  const auto top = cpu::top_k_grouped(log_probs, live, beam, k);
  const auto total =
      (torch::tensor(live, torch::kDouble).to(torch::kFloat).unsqueeze(1) + log_probs)
          .view({-1, beam * vocab});
  const auto [values, ids] = total.topk(k, -1);
  EXPECT_TRUE(torch::equal(top.values, values.to(torch::kDouble)));
  EXPECT_TRUE(torch::equal(top.ids, ids));
  // Fewer finite candidates than k: the rest are -inf.
  const auto small = torch::log_softmax(torch::randn({2, 3}), -1);
  const auto few = cpu::top_k_grouped(small, {0.0, -INFINITY}, 2, 4);
  EXPECT_EQ(few.values[0][2].item<double>(), small[0].min().item<double>());
  EXPECT_EQ(few.values[0][3].item<double>(), -INFINITY);
}

// The dropout mask drops about p of the elements, its threshold is p·2^32, and masks of two
// seeds differ.
TEST(CpuKernels, HashKeepsDropsAboutPAndDependsOnTheSeed) {
  const uint32_t threshold = uint32_t(0.25 * 4294967296.0);
  int64_t kept = 0, same = 0;
  const int64_t n = 200000;
  for (int64_t i = 0; i < n; ++i) {
    const bool a = cpu::hash_keeps(uint64_t(i), 11, threshold);
    kept += a;
    same += a == cpu::hash_keeps(uint64_t(i), 12, threshold);
  }
  EXPECT_NEAR(double(kept) / double(n), 0.75, 0.01);
  EXPECT_NEAR(double(same) / double(n), 0.75 * 0.75 + 0.25 * 0.25, 0.01);  // independent masks
  EXPECT_TRUE(cpu::hash_keeps(5, 11, 0));                                  // p = 0 keeps everything
}

}  // namespace
}  // namespace nmt
