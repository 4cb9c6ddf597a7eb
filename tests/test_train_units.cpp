#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/precision.h"
#include "model/dropout.h"
#include "train/bench.h"
#include "train/data_parallel.h"
#include "train/loss.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/validation.h"

namespace nmt {
namespace {

TEST(Schedule, InverseSqrtWarmsUpLinearlyThenDecays) {
  TrainConfig t;
  t.lr = 1e-3;
  t.warmup_steps = 100;
  EXPECT_DOUBLE_EQ(learning_rate(t, 1), 1e-5);
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 100), 1e-3);        // peak at the end of warmup
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3 * 0.5);  // sqrt(100 / 400)
  t.schedule = Schedule::kConstant;
  EXPECT_DOUBLE_EQ(learning_rate(t, 50), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(t, 400), 1e-3);
}

TEST(Schedule, LinearAndCosineWarmUpThenDecayToZeroAtTheBudget) {
  TrainConfig t;
  t.lr = 2e-3;
  t.warmup_steps = 100;
  for (const char* schedule : {"linear", "cosine"}) {
    t.schedule = require_choice<Schedule>("schedule", schedule);
    EXPECT_DOUBLE_EQ(learning_rate(t, 50, 0.0), 1e-3) << schedule;  // warmup ramp
    EXPECT_DOUBLE_EQ(learning_rate(t, 100, 0.0), 2e-3) << schedule;
    EXPECT_NEAR(learning_rate(t, 500, 0.5), 1e-3, 1e-12) << schedule;  // both halve at mid-budget
    EXPECT_NEAR(learning_rate(t, 900, 1.0), 0.0, 1e-12) << schedule;
    EXPECT_NEAR(learning_rate(t, 900, 1.5), 0.0, 1e-12) << schedule;  // progress is clamped
  }
  t.schedule = Schedule::kLinear;
  EXPECT_NEAR(learning_rate(t, 500, 0.25), 1.5e-3, 1e-12);
  t.schedule = Schedule::kCosine;
  EXPECT_NEAR(learning_rate(t, 500, 0.25), 1e-3 * (1.0 + std::sqrt(0.5)), 1e-12);
}

TEST(Schedule, BudgetProgressIsTheNearestLimit) {
  TrainConfig t;
  t.max_epochs = 0;
  t.max_minutes = 10;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.25);
  t.max_steps = 200;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.5);  // the step limit comes first
  t.max_epochs = 4;
  EXPECT_DOUBLE_EQ(budget_progress(t, 100, 150.0, 3.0), 0.75);
  EXPECT_DOUBLE_EQ(budget_progress(t, 400, 900.0, 9.0), 1.0);
}

TEST(Loss, LabelSmoothingMatchesTheDefinition) {
  torch::manual_seed(0);
  const auto logits = torch::randn({5, 7});
  const auto targets = torch::tensor({0, 3, 6, 2, 2}, torch::kLong);
  const double eps = 0.1;
  // Independent: the smoothed target distribution q = (1 - eps) one_hot + eps / V, loss = -Σ q log
  // p.
  const auto q = torch::full({5, 7}, eps / 7)
                     .scatter_add(1, targets.unsqueeze(1), torch::full({5, 1}, 1.0 - eps));
  const auto expected = -(q * torch::log_softmax(logits, -1)).sum();
  const auto sums = label_smoothed_cross_entropy(logits, targets, eps);
  EXPECT_NEAR(sums.loss.item<double>(), expected.item<double>(), 1e-5);
  const auto nll = torch::nn::functional::cross_entropy(
      logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  EXPECT_NEAR(sums.nll.item<double>(), nll.item<double>(), 1e-5);
  EXPECT_NEAR(label_smoothed_cross_entropy(logits, targets, 0.0).loss.item<double>(),
              nll.item<double>(), 1e-5);
}

// The fused CPU kernel against the composite ATen version: values and gradients, fp32 and bf16
// logits, rows longer than the kernel's 16 lanes with a ragged tail, and extreme logits.
TEST(Loss, FusedKernelMatchesTheReference) {
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

// R-Drop's consistency term: the reference against torch's kl_div both ways, zero for equal
// distributions (logits differing by a constant per row), and the fused kernel against the
// reference (values and gradients, fp32 and bf16, rows longer than 16 lanes with a ragged tail).
TEST(Loss, SymmetricKlMatchesKlDivBothWaysAndTheFusedKernelMatchesIt) {
  torch::manual_seed(4);
  const auto p_logits = 3.0 * torch::randn({6, 11}), q_logits = 3.0 * torch::randn({6, 11});
  const auto log_p = torch::log_softmax(p_logits, -1), log_q = torch::log_softmax(q_logits, -1);
  namespace F = torch::nn::functional;
  const auto sum = F::KLDivFuncOptions().reduction(torch::kSum);
  const double expected =
      0.5 * (F::kl_div(log_q, log_p.exp(), sum) + F::kl_div(log_p, log_q.exp(), sum)).item<double>();
  const auto stacked = torch::cat({p_logits, q_logits}, 0);
  EXPECT_NEAR(symmetric_kl_sum_reference(stacked).item<double>(), expected, 1e-5 * expected);
  EXPECT_NEAR(symmetric_kl_sum(stacked).item<double>(), expected, 1e-5 * expected);
  EXPECT_GT(expected, 0.0);
  EXPECT_NEAR(symmetric_kl_sum(torch::cat({p_logits, p_logits + 5.0}, 0)).item<double>(), 0.0,
              1e-5);
  EXPECT_THROW(symmetric_kl_sum(torch::zeros({3, 4})), c10::Error);

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

TEST(Loss, FusedKernelRejectsOutOfRangeTargets) {
  const auto logits = torch::zeros({2, 5});
  EXPECT_THROW(label_smoothed_cross_entropy(logits, torch::tensor({0, 5}, torch::kLong), 0.1),
               c10::Error);
}

/// Parameters named as a model names them: one large enough to be split across threads (and of
/// odd length, so the vector loop's tail counts), a matrix, a tiny bias and an embedding table.
torch::OrderedDict<std::string, at::Tensor> adam_parameters() {
  torch::manual_seed(3);
  torch::OrderedDict<std::string, at::Tensor> parameters;
  parameters.insert("encoder.layers.0.feedforward.fc_1.weight",
                    torch::randn({100003}).requires_grad_());
  parameters.insert("decoder.layers.0.self_attention.fc_q.weight",
                    torch::randn({31, 17}).requires_grad_());
  parameters.insert("decoder.layers.0.self_attention.fc_q.bias", torch::randn({7}).requires_grad_());
  parameters.insert("encoder.embeddings.tokens.weight", torch::randn({13, 5}).requires_grad_());
  return parameters;
}

torch::OrderedDict<std::string, at::Tensor> clones(
    const torch::OrderedDict<std::string, at::Tensor>& parameters) {
  torch::OrderedDict<std::string, at::Tensor> out;
  for (const auto& item : parameters) {
    out.insert(item.key(), item.value().detach().clone().requires_grad_());
  }
  return out;
}

/// The fused step against LibTorch's own: three steps on the same gradients (scaled by a clip
/// factor), then LibTorch's step continues the fused optimizer's state (same state keys and
/// layout, so checkpoints and resume are unaffected).
void expect_fused_step_matches_libtorch(double weight_decay, const std::string& decay_on) {
  TrainConfig config;
  config.lr = 1e-2;
  config.weight_decay = weight_decay;
  config.weight_decay_on = require_choice<DecayOn>("decay_on", decay_on);
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

TEST(Optimizer, FusedAdamMatchesLibTorch) { expect_fused_step_matches_libtorch(0.0, "all"); }

TEST(Optimizer, FusedAdamWMatchesLibTorch) { expect_fused_step_matches_libtorch(0.1, "all"); }

TEST(Optimizer, FusedAdamWWithExemptGroupMatchesLibTorch) {
  expect_fused_step_matches_libtorch(0.1, "linear");
}

TEST(Optimizer, WeightDecayOnPicksMatricesOrLinearWeights) {
  const auto matrix = torch::zeros({4, 3}), vector = torch::zeros({3});
  for (const char* decay_on : {"all", "matrices", "linear"}) {
    EXPECT_TRUE(decays("decoder.layers.1.feedforward.fc_2.weight", matrix, require_choice<DecayOn>("decay_on", decay_on))) << decay_on;
  }
  EXPECT_TRUE(decays("decoder.layers.1.feedforward.fc_2.bias", vector, DecayOn::kAll));
  EXPECT_FALSE(decays("decoder.layers.1.feedforward.fc_2.bias", vector, DecayOn::kMatrices));
  EXPECT_FALSE(decays("encoder.final_norm.weight", vector, DecayOn::kLinear));
  EXPECT_TRUE(decays("encoder.embeddings.tokens.weight", matrix, DecayOn::kMatrices));
  EXPECT_FALSE(decays("encoder.embeddings.tokens.weight", matrix, DecayOn::kLinear));
  EXPECT_FALSE(decays("decoder.embeddings.positions.weight", matrix, DecayOn::kLinear));
}

/// With zero gradients Adam's update is 0, so one step shows the decay alone: the decayed
/// parameters shrink by 1 - lr * weight_decay, the exempt ones do not move.
TEST(Optimizer, ExemptParametersAreNotDecayed) {
  TrainConfig config;
  config.lr = 0.01;
  config.weight_decay = 0.5;
  config.weight_decay_on = DecayOn::kLinear;
  auto parameters = adam_parameters();
  const auto before = clones(parameters);
  auto optimizer = make_optimizer(parameters, config);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  for (auto& p : parameters.values()) p.mutable_grad() = torch::zeros_like(p);
  optimizer_step(*optimizer, 1.0);
  for (const auto& item : parameters) {
    const bool decayed = item.value().dim() == 2 && item.key().find("embeddings") == std::string::npos;
    const auto expected = before[item.key()] * (decayed ? 1.0f - 0.01f * 0.5f : 1.0f);
    EXPECT_TRUE(torch::allclose(item.value(), expected, 1e-6, 1e-7)) << item.key();
  }
}

/// A resumed run rebuilds the optimizer from the config and loads the saved state: with two
/// groups the next step must be the one the uninterrupted optimizer takes.
TEST(Optimizer, GroupedStateSurvivesSaveAndLoad) {
  TrainConfig config;
  config.lr = 1e-2;
  config.weight_decay = 0.1;
  config.weight_decay_on = DecayOn::kMatrices;
  auto parameters = adam_parameters();
  auto optimizer = make_optimizer(parameters, config);
  const auto set_gradients = [](torch::OrderedDict<std::string, at::Tensor>& named, int seed) {
    torch::manual_seed(seed);
    for (auto& p : named.values()) p.mutable_grad() = torch::randn_like(p);
  };
  set_gradients(parameters, 1);
  optimizer_step(*optimizer, 1.0);
  std::stringstream saved;
  torch::save(*optimizer, saved);

  auto resumed_parameters = clones(parameters);
  auto resumed = make_optimizer(resumed_parameters, config);
  torch::load(*resumed, saved);
  set_gradients(parameters, 2);
  set_gradients(resumed_parameters, 2);
  optimizer_step(*optimizer, 1.0);
  optimizer_step(*resumed, 1.0);
  for (const auto& item : parameters) {
    EXPECT_TRUE(torch::equal(item.value(), resumed_parameters[item.key()])) << item.key();
  }
}

TEST(Optimizer, ClearGradientsLetsTheNextBackwardStartFresh) {
  const auto named = adam_parameters();
  auto parameters = named.values();
  auto optimizer = make_optimizer(named, TrainConfig{});
  (parameters[2] * 3.0).sum().backward();
  clear_gradients(*optimizer);
  EXPECT_FALSE(parameters[2].grad().defined());
  (parameters[2] * 2.0).sum().backward();
  EXPECT_TRUE(torch::equal(parameters[2].grad(), torch::full({7}, 2.0f)));  // not 3 + 2
}

TEST(Optimizer, ClipScaleIsClipGradNormsCoefficient) {
  auto parameters = adam_parameters().values();
  for (auto& p : parameters) p.mutable_grad() = torch::randn_like(p);
  const auto before = parameters[0].grad().clone();
  double norm = 0.0;
  for (auto& p : parameters) norm += p.grad().pow(2).sum().item<double>();
  norm = std::sqrt(norm);
  const double expected = 1.0 / (norm + 1e-6);
  EXPECT_NEAR(clip_scale(parameters, 1.0), expected, 1e-6 * expected);  // float32 norms
  EXPECT_DOUBLE_EQ(clip_scale(parameters, 10.0 * norm), 1.0);  // already within: no scaling
  EXPECT_DOUBLE_EQ(clip_scale(parameters, 0.0), 1.0);          // clipping off
  EXPECT_TRUE(torch::equal(parameters[0].grad(), before));     // gradients untouched
}

TEST(Dropout, KeepsTheRightFractionAndScales) {
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

TEST(Dropout, GradientUsesTheForwardMask) {
  const auto x = torch::randn({64, 33}).requires_grad_(true);
  const auto y = hash_dropout(x, 0.25, 7);
  const auto upstream = torch::randn({64, 33});
  (y * upstream).sum().backward();
  const auto mask = y.ne(0).to(torch::kFloat);
  EXPECT_TRUE(torch::allclose(x.grad(), upstream * mask / 0.75));
}

TEST(Dropout, Bfloat16UsesTheFloatMaskAndRounding) {
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

TEST(Dropout, IdentityInEvalModeAndReproducibleInTraining) {
  Dropout dropout(0.5);
  const auto x = torch::randn({8, 16}, torch::kBFloat16);
  dropout->eval();
  EXPECT_TRUE(torch::equal(dropout->forward(x), x));
  dropout->train();
  torch::manual_seed(9);
  const auto first = dropout->forward(x);
  EXPECT_EQ(first.scalar_type(), torch::kBFloat16);
  torch::manual_seed(9);
  EXPECT_TRUE(torch::equal(first, dropout->forward(x)));
  EXPECT_FALSE(torch::equal(first, dropout->forward(x)));
}

TEST(Validation, MetricDirection) {
  const double nan = std::nan("");
  EXPECT_TRUE(improves(Metric::kBleu, 20.0, nan));
  EXPECT_TRUE(improves(Metric::kBleu, 21.0, 20.0));
  EXPECT_FALSE(improves(Metric::kBleu, 19.0, 20.0));
  EXPECT_TRUE(improves(Metric::kLoss, 1.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, 2.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, nan, 2.0));
}

/// The CPU flags Linux reports in /proc/cpuinfo (empty elsewhere).
std::string cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

TEST(Precision, AutoIsBf16OnlyOnCpusWithBf16InstructionsAndFp32OnCuda) {
  // The CPUID check agrees with the kernel's own reading of the CPU.
  const std::string flags = cpuinfo_flags();
  if (!flags.empty()) {
    EXPECT_EQ(cpu_has_bf16_dot_product(), flags.find(" avx512_bf16 ") != std::string::npos)
        << flags;
  }
  EXPECT_EQ(resolve_precision(Precision::kAuto, at::kCPU), cpu_has_bf16_dot_product() ? Precision::kBf16 : Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kAuto, at::Device(at::kCUDA, 0)), Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kFp32, at::kCPU), Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kBf16, at::kCPU), Precision::kBf16);  // asked for: kept, whatever the CPU
  EXPECT_EQ(resolve_precision(Precision::kBf16, at::Device(at::kCUDA, 0)), Precision::kBf16);
  // The log line warns exactly when bf16 runs on a CPU without bf16 instructions.
  const std::string described = describe_precision(Precision::kBf16, at::kCPU);
  EXPECT_EQ(described.rfind("bf16", 0), 0u) << described;
  EXPECT_EQ(described.find("warning") != std::string::npos, !cpu_has_bf16_dot_product())
      << described;
  EXPECT_EQ(describe_precision(Precision::kFp32, at::kCPU), "fp32");
  EXPECT_EQ(describe_precision(Precision::kBf16, at::Device(at::kCUDA, 0)), "bf16");
  const auto x = torch::ones({2, 2});
  {
    AutocastGuard guard(Precision::kAuto, at::kCPU);  // autocast is on exactly when auto means bf16
    EXPECT_EQ(autocast_input(x).scalar_type(),
              cpu_has_bf16_dot_product() ? at::kBFloat16 : at::kFloat);
  }
  EXPECT_EQ(autocast_input(x).scalar_type(), at::kFloat);
}

TEST(Precision, AutocastInputCastsFloatOnlyUnderBf16Autocast) {
  const auto x = torch::randn({4, 8});
  EXPECT_TRUE(autocast_input(x).is_same(x));  // autocast off: the tensor itself
  {
    AutocastGuard guard(Precision::kBf16, torch::kCPU);
    const auto cast = autocast_input(x);
    EXPECT_EQ(cast.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(cast, x.to(torch::kBFloat16)));
    const auto ids = torch::arange(4);
    EXPECT_TRUE(autocast_input(ids).is_same(ids));  // not float32: left alone
  }
  {
    AutocastGuard guard(Precision::kFp32, torch::kCPU);
    EXPECT_TRUE(autocast_input(x).is_same(x));
  }
}

TEST(Bench, CeilingIterationsFitASlowKernelIntoATenthOfASecond) {
  // Without a timing: the same work at every size (20 products of 1024).
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU), 20);
  EXPECT_EQ(ceiling_iterations(2048, at::kCPU), 10);
  EXPECT_EQ(ceiling_iterations(256, at::kCPU), 80);
  // A fast product keeps that count; a slow one gets as many as fit in 0.1 s, at least one.
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU, 0.001), 20);
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU, 0.02), 5);
  EXPECT_EQ(ceiling_iterations(2048, at::kCPU, 3.3), 1);  // bf16 without bf16 instructions
  EXPECT_EQ(ceiling_iterations(2048, at::Device(at::kCUDA, 0), 3.3), 1164);  // CUDA: by FLOPs
  // The measured ceiling is a real, positive rate. No floor above 0: a loaded machine can be
  // arbitrarily slow (with a floor of 0.1 GFLOP/s this test failed once, among 16 tests run at
  // once on 16 cores, each on every core, and passed alone).
  const double gflops = ceiling_gflops_at(128, "fp32", at::kCPU);
  EXPECT_TRUE(std::isfinite(gflops));
  EXPECT_GT(gflops, 0.0);
}

}  // namespace
}  // namespace nmt

namespace nmt {
namespace {

TEST(DataParallel, ShardsInterleaveTheBatchAndDropEmptyOnes) {
  using Shards = std::vector<std::vector<size_t>>;
  EXPECT_EQ(interleaved_shards({4, 5, 6, 7, 8}, 2), (Shards{{4, 6, 8}, {5, 7}}));
  EXPECT_EQ(interleaved_shards({4, 5}, 3), (Shards{{4}, {5}}));
  EXPECT_EQ(interleaved_shards({4, 5, 6}, 1), (Shards{{4, 5, 6}}));
}

// Every worker runs each task once, single-threaded in LibTorch, while the caller's thread keeps
// its own thread count; a task's exception reaches the caller and the pool stays usable.
TEST(DataParallel, WorkerPoolRunsEachWorkerOnceAndRethrows) {
  const int before = at::get_num_threads();
  WorkerPool pool(3, before);
  std::vector<int> runs(3, 0), threads(3, 0);
  pool.run([&](int64_t w) {
    runs[size_t(w)] += 1;
    threads[size_t(w)] = at::get_num_threads();
  });
  EXPECT_EQ(runs, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(threads, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(at::get_num_threads(), before);
  EXPECT_THROW(pool.run([](int64_t w) {
                 if (w == 1) throw std::runtime_error("worker 1 failed");
               }),
               std::runtime_error);
  pool.run([&](int64_t w) { runs[size_t(w)] += 1; });
  EXPECT_EQ(runs, (std::vector<int>{2, 2, 2}));
}

// A pool whose threads cannot all be started (here the address space runs out for their
// stacks) stops the ones already running and throws one error that names the setting; a
// std::thread left joinable would terminate the process instead. Run in a forked child, whose
// address space limit does not reach the test process.
TEST(DataParallel, WorkerPoolThatCannotStartItsThreadsThrowsInsteadOfTerminating) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang ends the child by SIGALRM, which fails the test
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    statm >> pages;
    const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (64 << 20);
    const rlimit as{limit, limit};
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    try {
      WorkerPool pool(256, 1);  // 256 stacks of 8 MiB do not fit in 64 MiB more
    } catch (const std::runtime_error& e) {
      _exit(std::string(e.what()).find("train.cpu_workers = 256: could not start worker thread") !=
                    std::string::npos
                ? 0
                : 4);
    } catch (...) {
      _exit(5);
    }
    _exit(6);  // every thread started: the limit did not bite
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Inside a DropoutSeedScope the masks follow the scope's seed, not the default generator.
TEST(DataParallel, DropoutSeedScopeMakesMasksIndependentOfTheGenerator) {
  Dropout dropout(0.5);
  dropout->train();
  const auto x = torch::ones({64});
  at::Tensor first, second;
  {
    torch::manual_seed(1);
    DropoutSeedScope scope(42);
    first = dropout(x);
  }
  {
    torch::manual_seed(2);
    DropoutSeedScope scope(42);
    second = dropout(x);
  }
  EXPECT_TRUE(torch::equal(first, second));
  DropoutSeedScope scope(43);
  EXPECT_FALSE(torch::equal(dropout(x), first));
}

}  // namespace
}  // namespace nmt
