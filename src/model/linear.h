#pragma once

#include <memory>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "cpu/inference_linear.h"

namespace nmt {

/// torch::nn::Linear (the same parameters, initialisation and checkpoint names) that decodes
/// through its `twin`, the weights laid out for a CPU kernel, once one is set
/// (model/quantize.h: int8, or float32 packed); training never sets it.
class LinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;

  at::Tensor forward(const at::Tensor& input) {
    return twin ? twin->forward(input) : torch::nn::LinearImpl::forward(input);
  }

  std::shared_ptr<const cpu::InferenceLinear> twin;  ///< weight and bias for decoding, or null
};
TORCH_MODULE(Linear);

}  // namespace nmt
