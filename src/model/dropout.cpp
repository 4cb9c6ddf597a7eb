#include "model/dropout.h"

#include <cmath>
#include <limits>

#include <ATen/Parallel.h>
#include <torch/autograd.h>

namespace nmt {
namespace {

/// SplitMix64's finaliser (Steele et al. 2014): a well-mixed 64-bit value per counter.
inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// out[i] = in[i]·scale where the i-th 16-bit lane of the hash clears `threshold`, else 0.
/// Each 64-bit hash serves four consecutive elements; p is resolved to 1/65536.
template <class T>
void masked_scale(const T* in, T* out, int64_t n, uint64_t seed, uint32_t threshold, float scale) {
  const int64_t groups = (n + 3) / 4;
  at::parallel_for(0, groups, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const uint64_t bits = mix(seed + uint64_t(g) * 0x9E3779B97F4A7C15ull);
      const int64_t first = g * 4;
      const int64_t count = std::min<int64_t>(4, n - first);
      for (int64_t k = 0; k < count; ++k) {
        const uint32_t lane = uint32_t(bits >> (16 * k)) & 0xFFFFu;
        const float value = static_cast<float>(in[first + k]);
        out[first + k] = static_cast<T>(lane >= threshold ? value * scale : 0.0f);
      }
    }
  });
}

at::Tensor apply_mask(const at::Tensor& x, double p, uint64_t seed) {
  const auto input = x.contiguous();
  auto output = at::empty_like(input);
  const auto threshold = uint32_t(std::lround(p * 65536.0));
  const auto scale = float(1.0 / (1.0 - p));
  AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, input.scalar_type(), "hash_dropout", [&] {
    masked_scale(input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), input.numel(), seed,
                 threshold, scale);
  });
  return output;
}

/// The mask is a function of (seed, index), so backward applies the same mask to the gradient.
struct HashDropoutFunction : public torch::autograd::Function<HashDropoutFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p,
                            int64_t seed) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return apply_mask(x, p, uint64_t(seed));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const double p = ctx->saved_data["p"].toDouble();
    const auto seed = uint64_t(ctx->saved_data["seed"].toInt());
    return {apply_mask(grads[0], p, seed), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor hash_dropout(const at::Tensor& x, double p, uint64_t seed) {
  return HashDropoutFunction::apply(x, p, int64_t(seed));
}

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1), got ", p);
}

at::Tensor DropoutImpl::forward(const at::Tensor& x) {
  if (!is_training() || p == 0.0) return x;
  if (!x.device().is_cpu()) return at::dropout(x, p, /*train=*/true);
  // One draw from the default generator per call keeps the RNG stream (and resume) meaningful.
  const int64_t seed =
      at::randint(std::numeric_limits<int64_t>::max(), {1}, at::kLong).item<int64_t>();
  return hash_dropout(x, p, uint64_t(seed));
}

}  // namespace nmt
