#pragma once

#include <string>

#include <ATen/ATen.h>

namespace nmt {

/// "fp32" or "bf16" for a configured precision on `device`: "auto" is bf16 on the CPU (oneDNN's
/// AVX512-BF16 kernels make training 2-4x faster there) and fp32 on CUDA (small models are
/// kernel-launch bound on a GPU, and autocast's extra casts made training 3x slower on an H200);
/// "fp32" and "bf16" stay as they are.
std::string resolve_precision(const std::string& precision, const at::Device& device);

/// Enables autocast to bfloat16 on `device` for its lifetime when `precision` resolves to
/// "bf16" (a no-op for "fp32"). Matmuls then run in bf16 (oneDNN's AVX512-BF16 kernels on CPU,
/// tensor cores on CUDA); the residual stream, LayerNorm and the loss stay in fp32
/// (model/residual.h, train/loss.h).
class AutocastGuard {
 public:
  AutocastGuard(const std::string& precision, const at::Device& device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_ = false;
  bool cuda_ = false;
  bool previous_ = false;
};

/// `x` in autocast's dtype when autocast is on for x's device and x is float32, else `x` itself.
/// Casting a tensor once before the several matmuls that read it (q/k/v of self-attention, the
/// encoder output in every decoder layer's cross-attention) saves autocast a copy per matmul,
/// forward and backward.
at::Tensor autocast_input(const at::Tensor& x);

}  // namespace nmt
