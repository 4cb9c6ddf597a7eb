#pragma once

#include <string>

#include <ATen/ATen.h>

#include "core/config.h"

namespace nmt {

/// Whether this CPU has bf16 dot-product instructions (AVX512-BF16, which Intel Cooper Lake and
/// Sapphire Rapids and AMD Zen 4 have) and the OS has enabled the AVX-512 registers. Without
/// them LibTorch's bf16 matmuls fall back to scalar kernels: on an AVX2-only AMD EPYC the bf16
/// matmul ceiling measured 5.2 GFLOP/s against 183.8 in fp32, and training the default config
/// ran 74 target tokens/s in bf16 against 2,266 in fp32.
bool cpu_has_bf16_dot_product();

/// fp32 or bf16 for a configured precision on `device`: auto is bf16 on a CPU with
/// AVX512-BF16 (oneDNN's kernels make training 2-4x faster there), fp32 on other CPUs (see
/// cpu_has_bf16_dot_product) and on CUDA (small models are kernel-launch bound on a GPU, and
/// autocast's extra casts made training 3x slower on an H200); fp32 and bf16 stay as they are.
Precision resolve_precision(Precision precision, const at::Device& device);

/// resolve_precision's answer for logs, with a warning appended when it is bf16 on a CPU
/// without bf16 instructions (asked for explicitly; it runs, many times slower than fp32).
std::string describe_precision(Precision precision, const at::Device& device);

/// Enables autocast to bfloat16 on `device` for its lifetime when `precision` resolves to
/// "bf16" (a no-op for "fp32"). Matmuls then run in bf16 (oneDNN's AVX512-BF16 kernels on CPU,
/// tensor cores on CUDA); the residual stream, LayerNorm and the loss stay in fp32
/// (model/residual.h, train/loss.h).
class AutocastGuard {
 public:
  AutocastGuard(Precision precision, const at::Device& device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_ = false;
  bool cuda_ = false;
  bool previous_ = false;
};

/// Autocast is per thread: a thread that decodes for another (decode_all's workers) takes the
/// other's switches. Capture them in the parent (InheritedAutocast::State::current()), and hold
/// an InheritedAutocast in the child while it works.
class InheritedAutocast {
 public:
  struct State {
    bool cpu = false, cuda = false;
    static State current();  ///< the calling thread's switches
  };
  explicit InheritedAutocast(const State& state);
  ~InheritedAutocast();
  InheritedAutocast(const InheritedAutocast&) = delete;
  InheritedAutocast& operator=(const InheritedAutocast&) = delete;

 private:
  State state_;
};

/// Whether autocast is on for this thread on CPUs (cuda false) or on CUDA devices (cuda true),
/// through the functions of this LibTorch's version.
bool autocast_enabled(bool cuda);

/// `x` in autocast's dtype when autocast is on for x's device and x is float32, else `x` itself.
/// Casting a tensor once before the several matmuls that read it (q/k/v of self-attention, the
/// encoder output in every decoder layer's cross-attention) saves autocast a copy per matmul,
/// forward and backward.
at::Tensor autocast_input(const at::Tensor& x);

}  // namespace nmt
