// The hash dropout mask (cpu/kernels.h; the layer and its reasons: model/dropout.h).

#include <algorithm>
#include <cmath>

#include <ATen/Parallel.h>

#include "cpu/kernels.h"
#include "cpu/vectorize.h"

namespace nmt::cpu {
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

/// Two rounds, one per half of the 64-bit seed, so masks of different seeds are unrelated, not
/// shifted copies. The index is taken mod 2^32: a tensor of more than 4G elements would repeat
/// its mask.
inline bool keeps(uint64_t i, uint64_t seed, uint32_t threshold) {
  return mix32(mix32(uint32_t(i) + uint32_t(seed)) ^ uint32_t(seed >> 32)) >= threshold;
}

NMT_VECTOR_CLONES
void masked_scale_float(const float* in, float* out, int64_t begin, int64_t end, uint64_t seed,
                        uint32_t threshold, float scale) {
  for (int64_t i = begin; i < end; ++i) {
    out[i] = keeps(uint64_t(i), seed, threshold) ? in[i] * scale : 0.0f;
  }
}

NMT_VECTOR_CLONES
void masked_scale_bf16(const uint16_t* in, uint16_t* out, int64_t begin, int64_t end, uint64_t seed,
                       uint32_t threshold, float scale) {
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t kept = 0u - uint32_t(keeps(uint64_t(i), seed, threshold));  // all ones or 0
    out[i] = uint16_t(float_to_bf16(bf16_to_float(in[i]) * scale) & kept);
  }
}

}  // namespace

bool hash_keeps(uint64_t index, uint64_t seed, uint32_t threshold) {
  return keeps(index, seed, threshold);
}

at::Tensor hash_dropout_apply(const at::Tensor& x, double p, uint64_t seed) {
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
    const auto ones = at::ones(input.sizes(), input.options().dtype(at::kFloat));
    return input * hash_dropout_apply(ones, p, seed).to(input.scalar_type());
  }
  return output;
}

}  // namespace nmt::cpu
