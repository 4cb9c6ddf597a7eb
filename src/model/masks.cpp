#include "model/masks.h"

namespace nmt {

at::Tensor make_padding_mask(const at::Tensor& tokens, int64_t pad_id) {
  TORCH_CHECK(tokens.dim() == 2, "tokens must be [batch, len], got ", tokens.sizes());
  return tokens.ne(pad_id).unsqueeze(1).unsqueeze(2);  // [batch, 1, 1, len]
}

at::Tensor make_causal_mask(int64_t len, const at::Device& device) {
  auto ones = at::ones({len, len}, at::TensorOptions().dtype(at::kBool).device(device));
  return at::tril(ones).unsqueeze(0).unsqueeze(0);  // [1, 1, len, len]
}

at::Tensor make_target_mask(const at::Tensor& tokens, int64_t pad_id) {
  const auto padding = make_padding_mask(tokens, pad_id);                 // [batch, 1, 1, len]
  const auto causal = make_causal_mask(tokens.size(1), tokens.device());  // [1, 1, len, len]
  return padding.logical_and(causal);                                     // [batch, 1, len, len]
}

}  // namespace nmt
