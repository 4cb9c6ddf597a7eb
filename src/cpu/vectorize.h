#pragma once

// Building blocks of the kernels in src/cpu/ (not for use outside it: see cpu/kernels.h).

#include <cstdint>
#include <cstring>

// NMT_VECTOR_CLONES before a function with a plain loop over arrays: GCC builds AVX-512 and AVX2
// variants beside the baseline and picks one at load time (the build targets plain x86-64, so
// without this the loop gets SSE2 only). Other compilers get the plain, still vectorisable loop.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NMT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NMT_VECTOR_CLONES
#endif

namespace nmt::cpu {

/// Independent accumulators per reduction loop: GCC vectorises a reduction without -ffast-math
/// only when the lanes are written out.
constexpr int kLanes = 16;

/// bfloat16 bits widened to float32 (exact).
inline float bf16_to_float(uint16_t bits) {
  const uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// float32 narrowed to bfloat16 bits, rounding to nearest even (c10::BFloat16's rounding, NaN
/// excepted: a NaN stays a NaN or becomes an infinity, both non-finite).
inline uint16_t float_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

/// e^x for x <= 0 (clamped at -87): 2^n·2^f with n = round(x·log2 e), |f| <= 1/2, and a
/// degree-6 Taylor polynomial for 2^f; relative error below 1e-6 for x >= -10 and 4e-6 down to
/// the clamp (tests/test_cpu_kernels.cpp). Branch-free, so it vectorises.
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float t = x * 1.44269504088896341f;
  const float rounded = (t + 12582912.0f) - 12582912.0f;  // round to nearest (1.5·2^23 trick)
  const float f = (t - rounded) * 0.69314718055994531f;   // in [-0.347, 0.347]
  float p = 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  // Unsigned: adding n·2^23 wraps; shifting a negative n would be undefined before C++20.
  uint32_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits += uint32_t(int32_t(rounded)) << 23;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

}  // namespace nmt::cpu
