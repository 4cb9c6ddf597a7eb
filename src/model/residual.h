#pragma once

#include <torch/nn/modules/normalization.h>

#include "model/dropout.h"

namespace nmt {

/// One residual sublayer with LayerNorm (Vaswani et al. 2017, §5.4). Post-norm (the paper):
/// norm(x + dropout(f(x))). Pre-norm (Xiong et al. 2020): x + dropout(f(norm(x))).
/// The residual stream stays in x's dtype (fp32 under bf16 autocast: LayerNorm needs it).
template <class F>
at::Tensor residual(const at::Tensor& x, torch::nn::LayerNorm& norm, Dropout& dropout,
                    bool pre_norm, F&& sublayer) {
  if (pre_norm) return x + dropout->forward(sublayer(norm->forward(x))).to(x.scalar_type());
  return norm->forward(x + dropout->forward(sublayer(x)).to(x.scalar_type()));
}

}  // namespace nmt
