// The fused Adam(W) update (cpu/kernels.h; how the optimizer uses it: train/optimizer.cpp).
// Compiled with -fno-math-errno (CMakeLists.txt) so that the sqrt vectorises.

#include <cmath>

#include <ATen/Parallel.h>

#include "cpu/kernels.h"
#include "cpu/vectorize.h"

namespace nmt::cpu {
namespace {

NMT_VECTOR_CLONES
void adam_kernel(float* __restrict param, const float* __restrict grad, float* __restrict exp_avg,
                 float* __restrict exp_avg_sq, int64_t n, AdamScalars s) {
  for (int64_t i = 0; i < n; ++i) {
    const float p = param[i] * s.decay;
    const float g = grad[i] * s.grad_scale + s.l2 * p;
    const float m = exp_avg[i] * s.beta1 + (1.0f - s.beta1) * g;
    const float v = exp_avg_sq[i] * s.beta2 + (1.0f - s.beta2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    param[i] = p - s.step_size * (m / (std::sqrt(v) / s.sqrt_bias_correction2 + s.eps));
  }
}

}  // namespace

void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamScalars& scalars) {
  at::parallel_for(0, n, 1 << 15, [&](int64_t begin, int64_t end) {
    adam_kernel(param + begin, grad + begin, exp_avg + begin, exp_avg_sq + begin, end - begin,
                scalars);
  });
}

}  // namespace nmt::cpu
