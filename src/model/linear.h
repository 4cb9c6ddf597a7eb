#pragma once

#include <memory>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "cpu/int8_linear.h"

namespace nmt {

/// torch::nn::Linear (the same parameters, initialisation and checkpoint names) that decodes
/// with int8 weights once `int8` is set (model/quantize.h); training never sets it.
class LinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;

  at::Tensor forward(const at::Tensor& input) {
    return int8 ? int8->forward(input) : torch::nn::LinearImpl::forward(input);
  }

  std::shared_ptr<const cpu::Int8Linear> int8;  ///< int8 twin of weight and bias, or null
};
TORCH_MODULE(Linear);

}  // namespace nmt
