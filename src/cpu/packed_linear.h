#pragma once

// float32 linear layers for CPU decoding, with their weights packed once for a GEMM kernel.
//
// OpenBLAS (LibTorch's CPU GEMM here) has no packed-weights API: every call copies the weight
// matrix into its kernel's panel layout first. A decoder step multiplies a few hundred rows at
// most by weights that do not fit in the caches, so that copy cost about half as much as the
// products themselves (perf: sgemm_incopy 19% of greedy decoding, the kernel 34%). Here the
// weights are laid out once, in panels of 32 output columns with k running down each panel, and
// a register-blocked kernel (AVX-512: 12 rows × 32 columns; AVX2 + FMA: 3 × 32) streams them.
// oneDNN's float32 matmul with prepacked weights was measured too and was slower at 8 and at
// 256 rows (docs/lab/performance.md).

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "cpu/inference_linear.h"

namespace nmt::cpu {

/// The instruction sets the kernel has a version for, best last.
enum class GemmIsa { kNone, kAvx2, kAvx512 };

/// The best GemmIsa this CPU runs (kNone off x86-64 or without AVX2 and FMA). The environment
/// variable ATEN_CPU_CAPABILITY=avx2 or =default lowers it, as it does for LibTorch's kernels.
GemmIsa gemm_isa();

/// "avx512", "avx2" or "none".
std::string gemm_isa_name(GemmIsa isa);

/// One linear layer y = x·Wᵀ + b in float32.
class PackedLinear : public InferenceLinear {
 public:
  /// weight [out, in] and bias [out] (or undefined), any floating dtype, on the CPU; `isa` must
  /// not be better than gemm_isa() (kNone: the best there is). Throws std::runtime_error when
  /// this CPU has no kernel (gemm_isa() == kNone).
  PackedLinear(const at::Tensor& weight, const at::Tensor& bias, GemmIsa isa = GemmIsa::kNone);

  /// x [..., in] float32 on the CPU -> y [..., out] float32. The row tiles are split over the
  /// intra-op threads.
  at::Tensor forward(const at::Tensor& x) const override;
  std::shared_ptr<const InferenceLinear> like(const at::Tensor& weight,
                                              const at::Tensor& bias) const override;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  GemmIsa isa() const { return isa_; }

 private:
  int64_t in_ = 0, out_ = 0;
  GemmIsa isa_ = GemmIsa::kNone;
  at::Tensor panels_;  ///< float32 [ceil(out/32), in, 32], zero past `out` (64-byte aligned)
  at::Tensor bias_;    ///< float32 [ceil(out/32)·32], zero past `out`, or undefined
};

}  // namespace nmt::cpu
