// model/feedforward.cpp: the position-wise feed-forward block and its activations.
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "model/feedforward.h"
#include "test_util.h"

namespace nmt {
namespace {

/// The block computed by hand in double precision: fc_2(act(fc_1(x))), with GELU written as
/// 0.5·h·(1 + erf(h/√2)) (Hendrycks & Gimpel 2016, the exact form, not the tanh approximation).
at::Tensor reference(PositionwiseFeedforward& ff, const at::Tensor& x, const std::string& act) {
  const auto w1 = ff->fc_1->weight.to(at::kDouble), b1 = ff->fc_1->bias.to(at::kDouble);
  const auto w2 = ff->fc_2->weight.to(at::kDouble), b2 = ff->fc_2->bias.to(at::kDouble);
  const auto h = at::matmul(x.to(at::kDouble), w1.t()) + b1;
  const auto a = act == "gelu" ? 0.5 * h * (1.0 + at::erf(h / std::sqrt(2.0))) : h.clamp_min(0.0);
  return at::matmul(a, w2.t()) + b2;
}

TEST(Feedforward, GeluAndReluMatchTheirFormulas) {
  for (const std::string act : {"gelu", "relu"}) {
    torch::manual_seed(3);
    PositionwiseFeedforward ff(16, 48, 0.1, require_choice<Activation>("act", act));
    ff->eval();  // dropout off
    const auto x = 2.0 * torch::randn({3, 5, 16});
    torch::NoGradGuard no_grad;
    const auto got = ff->forward(x).to(at::kDouble);
    const auto expected = reference(ff, x, act);
    const double error = ((got - expected).abs() / (expected.abs() + 1e-3)).max().item<double>();
    // fp32 matmuls against double: 1.5e-5 on this kind of host with OpenBLAS's AVX-512 kernels,
    // while the tanh approximation of GELU is off by ~1e-3, so 1e-4 still tells them apart.
    EXPECT_LT(error, 1e-4) << act;
  }
}

// The activation is an enum, so an unknown one is stopped where the config is read.
TEST(Feedforward, UnknownActivationIsAConfigErrorNamingIt) {
  test::expect_error(
      [] {
        config_from_json(nlohmann::json::parse(R"({"model": {"activation": "swish"}})"), "c.json");
      },
      "c.json: model.activation = 'swish' is not valid: choose one of relu, gelu");
}

}  // namespace
}  // namespace nmt
