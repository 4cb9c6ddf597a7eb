#include "model/feedforward.h"

#include "core/error.h"

namespace nmt {

PositionwiseFeedforwardImpl::PositionwiseFeedforwardImpl(int64_t d_model, int64_t d_ff,
                                                         double dropout_p, Activation activation)
    : fc_1(register_module("fc_1", Linear(d_model, d_ff))),
      fc_2(register_module("fc_2", Linear(d_ff, d_model))),
      dropout(register_module("dropout", Dropout(dropout_p))),
      gelu_(activation == Activation::kGelu) {}

at::Tensor PositionwiseFeedforwardImpl::forward(const at::Tensor& x) {
  auto hidden = fc_1->forward(x);  // [batch, len, d_ff]
  hidden = gelu_ ? at::gelu(hidden) : at::relu(hidden);
  return fc_2->forward(dropout->forward(hidden));  // [batch, len, d_model]
}

}  // namespace nmt
