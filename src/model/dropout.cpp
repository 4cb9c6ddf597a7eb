#include "model/dropout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include "core/vectorize.h"

namespace nmt {
namespace {

/// Chris Wellons' "lowbias32" integer hash: 32-bit multiplies and shifts only, so the loops
/// below vectorise (one hash per element, 16 elements per AVX-512 instruction).
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

/// Element i is kept when hash(seed, i) >= threshold (p resolved to 2^-32). Two rounds, one per
/// half of the 64-bit seed, so masks of different seeds are unrelated, not shifted copies. The
/// index is taken mod 2^32: a tensor of more than 4G elements would repeat its mask.
inline bool keep(uint64_t i, uint64_t seed, uint32_t threshold) {
  return mix32(mix32(uint32_t(i) + uint32_t(seed)) ^ uint32_t(seed >> 32)) >= threshold;
}

// Plain loops over [begin, end) that the compiler vectorises (core/vectorize.h).
NMT_VECTOR_CLONES
void masked_scale_float(const float* in, float* out, int64_t begin, int64_t end, uint64_t seed,
                        uint32_t threshold, float scale) {
  for (int64_t i = begin; i < end; ++i) {
    out[i] = keep(uint64_t(i), seed, threshold) ? in[i] * scale : 0.0f;
  }
}

/// bfloat16 as raw bits: widen by a shift, narrow with round-to-nearest-even (c10::BFloat16's
/// rounding, NaN excepted: a NaN gradient stays a NaN or becomes an infinity, both non-finite).
NMT_VECTOR_CLONES
void masked_scale_bf16(const uint16_t* in, uint16_t* out, int64_t begin, int64_t end, uint64_t seed,
                       uint32_t threshold, float scale) {
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t wide = uint32_t(in[i]) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    value *= scale;
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const uint32_t kept = 0u - uint32_t(keep(uint64_t(i), seed, threshold));  // all ones or 0
    out[i] = uint16_t(((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16) & kept);
  }
}

at::Tensor apply_mask(const at::Tensor& x, double p, uint64_t seed) {
  const auto input = x.contiguous();
  auto output = at::empty_like(input);
  // p in (0, 1): the threshold fits 32 bits (p·2^32 rounded, at most 2^32 - 1).
  const auto threshold = uint32_t(std::min(std::llround(p * 4294967296.0), 4294967295ll));
  const auto scale = float(1.0 / (1.0 - p));
  const int64_t n = input.numel();
  constexpr int64_t kGrain = 32768;
  if (input.scalar_type() == at::kFloat) {
    const float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      masked_scale_float(in, out, begin, end, seed, threshold, scale);
    });
  } else if (input.scalar_type() == at::kBFloat16) {
    const auto* in = reinterpret_cast<const uint16_t*>(input.data_ptr<at::BFloat16>());
    auto* out = reinterpret_cast<uint16_t*>(output.data_ptr<at::BFloat16>());
    at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      masked_scale_bf16(in, out, begin, end, seed, threshold, scale);
    });
  } else {
    // Other dtypes (double, half): the same mask, as a float tensor of 0/scale.
    return input * apply_mask(at::ones(input.sizes(), input.options().dtype(at::kFloat)), p, seed)
                       .to(input.scalar_type());
  }
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
  return uint64_t(
      at::randint(std::numeric_limits<int64_t>::max(), {1}, at::kLong).item<int64_t>());
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
