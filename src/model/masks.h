#pragma once

#include <ATen/ATen.h>

namespace nmt {

// Attention masks are boolean and broadcast against scores [batch, heads, q_len, k_len]:
// true = the query may attend to that key, false = the key gets exactly zero weight.

/// Keys that are not padding. tokens [batch, len] -> [batch, 1, 1, len].
at::Tensor make_padding_mask(const at::Tensor& tokens, int64_t pad_id);

/// Lower-triangular mask: position i sees positions <= i. -> [1, 1, len, len].
at::Tensor make_causal_mask(int64_t len, const at::Device& device);

/// Decoder self-attention mask: padding and causality. tokens [batch, len] -> [batch, 1, len, len].
at::Tensor make_target_mask(const at::Tensor& tokens, int64_t pad_id);

}  // namespace nmt
