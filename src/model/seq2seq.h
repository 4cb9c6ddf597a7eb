#pragma once

#include <torch/nn/module.h>

#include "core/config.h"
#include "model/decoder.h"
#include "model/encoder.h"

namespace nmt {

/// The encoder-decoder Transformer (Vaswani et al. 2017, §3). Token ids use the fixed special
/// ids of core/special_ids.h (pad = 0). Batch-first throughout.
class Seq2SeqImpl : public torch::nn::Module {
 public:
  /// Needs src_vocab_size and tgt_vocab_size > 0. Parameters get Xavier-uniform initialisation,
  /// or with `initialize` false only LibTorch's own (a model whose weights are loaded next:
  /// the random draws took 30 ms of `nmt translate`'s start-up).
  explicit Seq2SeqImpl(const ModelConfig& config, bool initialize = true);

  /// src [batch, src_len] -> [batch, 1, 1, src_len] (true = real token).
  at::Tensor make_src_mask(const at::Tensor& src) const;
  /// tgt [batch, tgt_len] -> [batch, 1, tgt_len, tgt_len] (padding and causal).
  at::Tensor make_tgt_mask(const at::Tensor& tgt) const;

  /// src [batch, src_len] -> memory [batch, src_len, d_model]
  at::Tensor encode(const at::Tensor& src, const at::Tensor& src_mask);
  /// Teacher-forced decoding: logits [batch, tgt_len, tgt_vocab] and the last layer's
  /// cross-attention [batch, heads, tgt_len, src_len].
  std::tuple<at::Tensor, at::Tensor> decode(const at::Tensor& tgt_in, const at::Tensor& memory,
                                            const at::Tensor& src_mask);
  /// src [batch, src_len], tgt_in [batch, tgt_len] -> logits [batch, tgt_len, tgt_vocab]
  at::Tensor forward(const at::Tensor& src, const at::Tensor& tgt_in);
  /// As forward() but returns the decoder's hidden states [batch, tgt_len, d_model]; pair with
  /// decoder->project() on the positions that matter.
  at::Tensor forward_hidden(const at::Tensor& src, const at::Tensor& tgt_in);

  const ModelConfig& config() const { return config_; }

  Encoder encoder{nullptr};
  Decoder decoder{nullptr};

 private:
  ModelConfig config_;
};
TORCH_MODULE(Seq2Seq);

/// Number of distinct parameter elements (shared tensors counted once).
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace nmt
