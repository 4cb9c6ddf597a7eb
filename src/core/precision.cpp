#include "core/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

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

at::Tensor autocast_input(const at::Tensor& x) {
  if (x.scalar_type() != at::kFloat || !is_enabled(x.is_cuda())) return x;
  return x.to(at::kBFloat16);  // the only dtype AutocastGuard sets
}

std::string resolve_precision(const std::string& precision, const at::Device& device) {
  if (precision == "auto") return device.is_cuda() ? "fp32" : "bf16";
  return precision;
}

AutocastGuard::AutocastGuard(const std::string& precision, const at::Device& device)
    : enabled_(resolve_precision(precision, device) == "bf16"), cuda_(device.is_cuda()) {
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
