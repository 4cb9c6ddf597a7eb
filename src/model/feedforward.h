#pragma once

#include <string>

#include <torch/nn/module.h>

#include "core/config.h"
#include "model/dropout.h"
#include "model/linear.h"

namespace nmt {

/// Position-wise feed-forward network (Vaswani et al. 2017, §3.3): fc_2(dropout(act(fc_1(x)))).
class PositionwiseFeedforwardImpl : public torch::nn::Module {
 public:
  /// activation: relu (the paper) or gelu.
  PositionwiseFeedforwardImpl(int64_t d_model, int64_t d_ff, double dropout,
                              Activation activation = Activation::kRelu);

  /// x [batch, len, d_model] -> [batch, len, d_model]
  at::Tensor forward(const at::Tensor& x);

  Linear fc_1{nullptr}, fc_2{nullptr};
  Dropout dropout{nullptr};

 private:
  bool gelu_;
};
TORCH_MODULE(PositionwiseFeedforward);

}  // namespace nmt
