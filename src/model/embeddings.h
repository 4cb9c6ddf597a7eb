#pragma once

#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>

#include "core/config.h"
#include "model/dropout.h"

namespace nmt {

/// The sinusoidal table of Vaswani et al. 2017, §3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d)),
/// PE(pos, 2i+1) = cos(pos / 10000^(2i/d)). -> [len, d_model] (float32).
at::Tensor sinusoidal_positions(int64_t len, int64_t d_model);

/// Token embedding scaled by sqrt(d_model) (§3.4), with whole tokens dropped in training when
/// word dropout is on, plus positions, then dropout.
class EmbeddingsImpl : public torch::nn::Module {
 public:
  /// positions: learned (a max_len × d_model table) or sinusoidal (fixed). When `shared` is
  /// given, its token table is used and not registered here (it belongs to another module).
  EmbeddingsImpl(int64_t vocab_size, int64_t d_model, int64_t max_len, Positions positions,
                 double dropout, double word_dropout = 0.0, torch::nn::Embedding shared = nullptr);

  /// tokens [batch, len] -> [batch, len, d_model]; `offset` is the position of tokens[:, 0]
  /// (non-zero when decoding one step at a time).
  at::Tensor forward(const at::Tensor& tokens, int64_t offset = 0);

  /// The token table [vocab, d_model] (tied output projections read it).
  const at::Tensor& token_weight() const { return tokens->weight; }

  torch::nn::Embedding tokens{nullptr};
  torch::nn::Embedding learned{nullptr};  ///< learned positions, or null
  Dropout dropout{nullptr};
  Dropout word_dropout{nullptr};  ///< drops [batch, len, 1]: a token's whole embedding, or null

 private:
  at::Tensor sinusoid_;  ///< buffer [max_len, d_model] when positions are sinusoidal
  int64_t d_model_;
  int64_t max_len_;
};
TORCH_MODULE(Embeddings);

}  // namespace nmt
