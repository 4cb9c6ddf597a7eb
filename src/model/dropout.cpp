#include "model/dropout.h"

#include <limits>

#include <torch/autograd.h>

#include "cpu/kernels.h"

namespace nmt {
namespace {

/// y = x·m/(1-p) with m_i = 1 if hash(seed, i) >= p·2^32 else 0 (cpu::hash_keeps): the mask is a
/// function of (seed, index), so backward applies the same mask to the gradient.
struct HashDropoutFunction : public torch::autograd::Function<HashDropoutFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p,
                            int64_t seed) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return cpu::hash_dropout_apply(x, p, uint64_t(seed));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const double p = ctx->saved_data["p"].toDouble();
    const auto seed = uint64_t(ctx->saved_data["seed"].toInt());
    return {cpu::hash_dropout_apply(grads[0], p, seed), at::Tensor(), at::Tensor()};
  }
};

/// This thread's seed stream (DropoutSeedScope), when one is active.
struct SeedStream {
  bool active = false;
  uint64_t state = 0;
};
thread_local SeedStream seed_stream;

/// splitmix64's step: consecutive states give unrelated 64-bit outputs.
uint64_t next_seed(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

DropoutSeedScope::DropoutSeedScope(uint64_t seed)
    : outer_active_(seed_stream.active), outer_state_(seed_stream.state) {
  seed_stream = {true, seed};
}

DropoutSeedScope::~DropoutSeedScope() { seed_stream = {outer_active_, outer_state_}; }

uint64_t draw_dropout_seed() {
  return uint64_t(at::randint(std::numeric_limits<int64_t>::max(), {1}, at::kLong).item<int64_t>());
}

at::Tensor hash_dropout(const at::Tensor& x, double p, uint64_t seed) {
  return HashDropoutFunction::apply(x, p, int64_t(seed));
}

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1), got ", p);
}

at::Tensor DropoutImpl::forward(const at::Tensor& x) {
  if (!is_training() || p == 0.0) return x;
  if (!x.device().is_cpu()) return at::dropout(x, p, /*train=*/true);
  if (seed_stream.active) return hash_dropout(x, p, next_seed(seed_stream.state));
  // One draw from the default generator per call keeps the RNG stream (and resume) meaningful.
  return hash_dropout(x, p, draw_dropout_seed());
}

}  // namespace nmt
