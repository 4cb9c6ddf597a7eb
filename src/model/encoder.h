#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/normalization.h>

#include "core/config.h"
#include "model/attention.h"
#include "model/embeddings.h"
#include "model/feedforward.h"

namespace nmt {

/// Encoder layer (Vaswani et al. 2017, §3.1): self-attention, then the feed-forward block, each
/// in a residual sublayer with LayerNorm (post-norm by default, pre-norm by config).
class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const ModelConfig& config);

  /// x [batch, src_len, d_model], src_mask [batch, 1, 1, src_len] -> [batch, src_len, d_model]
  at::Tensor forward(const at::Tensor& x, const at::Tensor& src_mask);

  MultiHeadAttention self_attention{nullptr};
  PositionwiseFeedforward feedforward{nullptr};
  torch::nn::LayerNorm self_attention_norm{nullptr}, feedforward_norm{nullptr};
  Dropout dropout{nullptr};

 private:
  bool pre_norm_;
};
TORCH_MODULE(EncoderLayer);

/// Source embeddings and a stack of encoder layers (plus a final LayerNorm with pre-norm).
class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const ModelConfig& config);

  /// src [batch, src_len] token ids, src_mask [batch, 1, 1, src_len] -> [batch, src_len, d_model]
  at::Tensor forward(const at::Tensor& src, const at::Tensor& src_mask);

  Embeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};  ///< only with pre-norm
};
TORCH_MODULE(Encoder);

}  // namespace nmt
