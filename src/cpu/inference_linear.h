#pragma once

#include <ATen/ATen.h>

namespace nmt::cpu {

/// A linear layer y = x·Wᵀ + b whose weights were laid out once for one CPU kernel, for decoding
/// only (no gradient): Int8Linear (int8 weights) and PackedLinear (float32 weights). A model's
/// Linear modules hold one as their twin (model/linear.h, model/quantize.h). Immutable after
/// construction: forward may run on several threads at once.
class InferenceLinear {
 public:
  virtual ~InferenceLinear() = default;
  /// x [..., in] on the CPU -> y [..., out] float32.
  virtual at::Tensor forward(const at::Tensor& x) const = 0;
};

}  // namespace nmt::cpu
