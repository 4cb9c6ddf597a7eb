#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "model/attention.h"
#include "model/masks.h"
#include "test_util.h"

namespace nmt {
namespace {

/// Nested JSON array -> float tensor of the given shape.
at::Tensor from_json(const nlohmann::json& j, at::IntArrayRef shape) {
  std::vector<float> flat;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& x) {
    if (x.is_array()) {
      for (const auto& e : x) walk(e);
    } else {
      flat.push_back(x.is_boolean() ? float(x.get<bool>()) : x.get<float>());
    }
  };
  walk(j);
  return torch::tensor(flat).reshape(shape);
}

/// tests/fixtures/attention_golden.json, from scripts/dev/golden_attention.py (NumPy).
nlohmann::json read_golden() {
  std::ifstream in(std::string(NMT_FIXTURES_DIR) + "/attention_golden.json");
  if (!in) throw std::runtime_error("missing tests/fixtures/attention_golden.json");
  return nlohmann::json::parse(in);
}

/// Copies the golden parameters into `attention` (left in eval mode) and returns the golden
/// query [2, 2, d], key and value [2, 3, d] and mask [2, 1, 1, 3].
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> load_golden(
    MultiHeadAttention& attention, const nlohmann::json& golden) {
  const int64_t d = golden["d_model"];
  attention->eval();
  torch::NoGradGuard no_grad;
  for (auto& item : attention->named_parameters()) {
    item.value().copy_(from_json(golden["params"][item.key()], item.value().sizes()));
  }
  return {from_json(golden["query"], {2, 2, d}), from_json(golden["key"], {2, 3, d}),
          from_json(golden["value"], {2, 3, d}),
          from_json(golden["mask"], {2, 1, 1, 3}).to(at::kBool)};
}

TEST(Attention, MatchesIndependentNumpyGolden) {
  const auto golden = read_golden();
  const int64_t d = golden["d_model"], heads = golden["n_heads"];
  MultiHeadAttention attention(d, heads, 0.0);
  const auto [q, k, v, mask] = load_golden(attention, golden);
  auto [output, weights] = attention->forward(q, k, v, mask);
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, heads, 2, 3}));
  EXPECT_TRUE(torch::allclose(weights, from_json(golden["weights"], {2, heads, 2, 3}), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(output, from_json(golden["output"], {2, 2, d}), 1e-5, 1e-6));
}

// The path that runs when no weights are asked for (attend(..., need_weights = false), what the
// model's forward uses): LibTorch >= 2.0 hands it to at::scaled_dot_product_attention (fused
// kernels on CUDA; on the CPU when dropout is off), LibTorch 1.13 computes it as above and drops
// the weights. Either way it must give the golden output.
TEST(Attention, PathWithoutWeightsMatchesTheGolden) {
  const auto golden = read_golden();
  const int64_t d = golden["d_model"], heads = golden["n_heads"];
  MultiHeadAttention attention(d, heads, 0.1);  // dropout, but eval(): off
  const auto [q, k, v, mask] = load_golden(attention, golden);
  auto [output, weights] = attention->attend(q, attention->project(k, v), mask, false);
  EXPECT_FALSE(weights.defined());
  EXPECT_TRUE(torch::allclose(output, from_json(golden["output"], {2, 2, d}), 1e-5, 1e-6))
      << "LibTorch " << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR << ", max difference "
      << (output - from_json(golden["output"], {2, 2, d})).abs().max().item<double>();
}

/// Sets every projection to the identity with zero bias.
void make_identity(MultiHeadAttention& attention) {
  torch::NoGradGuard no_grad;
  for (auto* fc : {&attention->fc_q, &attention->fc_k, &attention->fc_v, &attention->fc_o}) {
    (*fc)->weight.copy_(torch::eye((*fc)->weight.size(0)));
    (*fc)->bias.zero_();
  }
}

TEST(Attention, HandWorkedSoftmaxIsNotHalfHalf) {
  // One head, d = 2, identity projections. Scores of q = [0, sqrt(2)] against keys
  // [1,0], [0,1], [1,0] are [0, 1, 0] after the 1/sqrt(2) scaling, and
  // softmax([0, 1, 0]) = [1, e, 1] / (2 + e) = [0.2119, 0.5761, 0.2119] (not [0.5, 0.5, 0]).
  MultiHeadAttention attention(2, 1, 0.0);
  make_identity(attention);
  const auto q = torch::tensor({0.0f, std::sqrt(2.0f)}).reshape({1, 1, 2});
  const auto k = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f}).reshape({1, 3, 2});
  const auto v = torch::tensor({10.0f, 0.0f, 0.0f, 10.0f, 20.0f, 0.0f}).reshape({1, 3, 2});
  auto [output, weights] = attention->forward(q, k, v);
  const double e = std::exp(1.0);
  const double side = 1.0 / (2.0 + e), middle = e / (2.0 + e);
  EXPECT_NEAR(weights[0][0][0][0].item<double>(), side, 1e-6);
  EXPECT_NEAR(weights[0][0][0][1].item<double>(), middle, 1e-6);
  EXPECT_NEAR(weights[0][0][0][2].item<double>(), side, 1e-6);
  EXPECT_NEAR(side, 0.2119, 1e-4);
  // Output = weights · V = [30 * side, 10 * middle].
  EXPECT_NEAR(output[0][0][0].item<double>(), 30.0 * side, 1e-5);
  EXPECT_NEAR(output[0][0][1].item<double>(), 10.0 * middle, 1e-5);
}

TEST(Attention, PaddedKeysGetExactlyZeroWeightAndNoInfluence) {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 2, 0.0);
  attention->eval();
  auto tokens = torch::tensor({5, 6, 7, 0, 0}, torch::kLong).reshape({1, 5});
  auto mask = make_padding_mask(tokens, 0);  // [1, 1, 1, 5]
  auto x = torch::randn({1, 5, 8});
  auto [out1, w1] = attention->forward(x, x, x, mask);
  EXPECT_EQ(w1.slice(3, 3).abs().max().item<float>(), 0.0f);
  auto y = x.clone();
  y.slice(1, 3) = torch::randn({1, 2, 8}) * 100;  // change padded positions only
  auto [out2, w2] = attention->forward(y, y, y, mask);
  EXPECT_TRUE(torch::equal(out1.slice(1, 0, 3), out2.slice(1, 0, 3)));
}

TEST(Attention, HeadsMustDivideModelWidth) {
  test::expect_error([] { MultiHeadAttention(10, 3, 0.0); }, "multiple of n_heads = 3");
}

}  // namespace
}  // namespace nmt
