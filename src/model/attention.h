#pragma once

#include <tuple>

#include <torch/nn/module.h>

#include "model/dropout.h"
#include "model/linear.h"

namespace nmt {

/// Projected keys and values split into heads, each [batch, heads, len, head_dim]. Decoding
/// caches these: the encoder's once per sentence, the decoder's growing by one position a step.
struct KeyValue {
  at::Tensor key;
  at::Tensor value;
  bool defined() const { return key.defined(); }
};

/// at::matmul(a, b) for attention's products ([..., M, K]·[..., K, N], batch sizes equal),
/// forward and backward through cpu::batched_matmul where it takes the operands (float32 on a
/// CPU, outside bf16 autocast), which calls BLAS once per product on the operands' own strides.
at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b);

/// Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.1-3.2.2):
/// softmax(Q K^T / sqrt(head_dim)) V per head, heads concatenated and projected by fc_o.
class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  /// d_model must be divisible by n_heads; `dropout` applies to the attention weights.
  MultiHeadAttentionImpl(int64_t d_model, int64_t n_heads, double dropout);

  /// query [batch, q_len, d_model], key/value [batch, k_len, d_model]; mask (optional, bool,
  /// true = attend) broadcastable to [batch, heads, q_len, k_len].
  /// Returns the output [batch, q_len, d_model] and the weights [batch, heads, q_len, k_len].
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& query, const at::Tensor& key,
                                             const at::Tensor& value, const at::Tensor& mask = {});

  /// fc_k/fc_v projections of key/value, split into heads.
  KeyValue project(const at::Tensor& key, const at::Tensor& value);

  /// Attention of `query` [batch, q_len, d_model] over already projected keys/values. Without
  /// `need_weights` the weights tensor is undefined and LibTorch 2.x uses its fused kernel.
  std::tuple<at::Tensor, at::Tensor> attend(const at::Tensor& query, const KeyValue& kv,
                                            const at::Tensor& mask, bool need_weights = true);

  int64_t n_heads() const { return n_heads_; }
  int64_t head_dim() const { return head_dim_; }

  Linear fc_q{nullptr}, fc_k{nullptr}, fc_v{nullptr}, fc_o{nullptr};
  Dropout dropout{nullptr};

 private:
  at::Tensor split_heads(const at::Tensor& x) const;  // [b, len, d] -> [b, heads, len, head_dim]
  int64_t n_heads_;
  int64_t head_dim_;
  double dropout_p_;
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace nmt
