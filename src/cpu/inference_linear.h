#pragma once

#include <ATen/ATen.h>

#include <memory>

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
  /// A layer of the same kind and settings over other float weights (the output projection's
  /// rows of a lexical shortlist, decode/shortlist.h): weight [out, in], bias [out] or undefined.
  virtual std::shared_ptr<const InferenceLinear> like(const at::Tensor& weight,
                                                      const at::Tensor& bias) const = 0;
};

}  // namespace nmt::cpu
