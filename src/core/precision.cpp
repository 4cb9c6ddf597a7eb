#include "core/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nmt {
namespace {

// LibTorch 2.4 moved autocast to per-device-type functions; 1.13 has per-backend ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool is_enabled(bool cuda) {
  return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
}
void set_enabled(bool cuda, bool on) {
  at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, on);
  if (on) at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, at::kBFloat16);
}
#else
bool is_enabled(bool cuda) {
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_enabled(bool cuda, bool on) {
  if (cuda) {
    at::autocast::set_enabled(on);
    if (on) at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  } else {
    at::autocast::set_cpu_enabled(on);
    if (on) at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  }
}
#endif

}  // namespace

bool autocast_enabled(bool cuda) { return is_enabled(cuda); }

at::Tensor autocast_input(const at::Tensor& x) {
  if (x.scalar_type() != at::kFloat || !is_enabled(x.is_cuda())) return x;
  return x.to(at::kBFloat16);  // the only dtype AutocastGuard sets
}

bool cpu_has_bf16_dot_product() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  // The OS must save the AVX-512 state (XCR0: SSE, AVX, opmask, upper ZMM, high ZMM).
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0xE6u) != 0xE6u) return false;
  // CPUID leaf 7, sub-leaf 1, EAX bit 5: AVX512_BF16.
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax >> 5) & 1u;
#else
  return false;  // elsewhere bf16 is opt-in (train.precision = bf16)
#endif
}

Precision resolve_precision(Precision precision, const at::Device& device) {
  if (precision != Precision::kAuto) return precision;
  if (device.is_cuda()) return Precision::kFp32;
  static const bool native_bf16 = cpu_has_bf16_dot_product();
  return native_bf16 ? Precision::kBf16 : Precision::kFp32;
}

std::string describe_precision(Precision precision, const at::Device& device) {
  const std::string resolved = choice_name(resolve_precision(precision, device));
  if (resolved != "bf16" || !device.is_cpu() || cpu_has_bf16_dot_product()) return resolved;
  return resolved +
         " (warning: this CPU has no AVX512-BF16, so bf16 matmuls run on slow fallback kernels; "
         "train.precision=auto or fp32 is many times faster here)";
}

InheritedAutocast::State InheritedAutocast::State::current() {
  return {is_enabled(false), is_enabled(true)};
}

InheritedAutocast::InheritedAutocast(const State& state) : state_(state) {
  if (state_.cpu) set_enabled(false, true);
  if (state_.cuda) set_enabled(true, true);
}

InheritedAutocast::~InheritedAutocast() {
  if (state_.cpu) set_enabled(false, false);
  if (state_.cuda) set_enabled(true, false);
  if (state_.cpu || state_.cuda) at::autocast::clear_cache();
}

AutocastGuard::AutocastGuard(Precision precision, const at::Device& device)
    : enabled_(resolve_precision(precision, device) == Precision::kBf16), cuda_(device.is_cuda()) {
  if (!enabled_) return;
  previous_ = is_enabled(cuda_);
  set_enabled(cuda_, true);
}

AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  set_enabled(cuda_, previous_);
  if (!previous_) at::autocast::clear_cache();  // casted weight copies are per forward pass
}

}  // namespace nmt
