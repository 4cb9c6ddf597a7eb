#include "model/encoder.h"

#include "core/precision.h"
#include "model/residual.h"

namespace nmt {

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config)
    : self_attention(register_module(
          "self_attention",
          MultiHeadAttention(config.d_model, config.n_heads, config.attention_dropout))),
      feedforward(register_module(
          "feedforward",
          PositionwiseFeedforward(config.d_model, config.d_ff, config.dropout, config.activation))),
      self_attention_norm(
          register_module("self_attention_norm",
                          torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})))),
      feedforward_norm(register_module(
          "feedforward_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})))),
      dropout(register_module("dropout", Dropout(config.dropout))),
      pre_norm_(config.norm == Norm::kPre) {}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& src_mask) {
  auto h = residual(x, self_attention_norm, dropout, pre_norm_, [&](const at::Tensor& in) {
    const auto in_mm = autocast_input(in);
    return std::get<0>(self_attention->attend(in_mm, self_attention->project(in_mm, in_mm),
                                              src_mask,
                                              /*need_weights=*/false));
  });
  return residual(h, feedforward_norm, dropout, pre_norm_,
                  [&](const at::Tensor& in) { return feedforward->forward(in); });
}

EncoderImpl::EncoderImpl(const ModelConfig& config)
    : embeddings(register_module(
          "embeddings", Embeddings(config.src_vocab_size, config.d_model, config.max_len,
                                   config.positions, config.dropout, config.word_dropout))),
      layers(register_module("layers", torch::nn::ModuleList())) {
  for (int64_t i = 0; i < config.encoder_layers; ++i) layers->push_back(EncoderLayer(config));
  if (config.norm == Norm::kPre) {
    final_norm = register_module(
        "final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})));
  }
}

at::Tensor EncoderImpl::forward(const at::Tensor& src, const at::Tensor& src_mask) {
  auto x = embeddings->forward(src);  // [batch, src_len, d_model]
  for (const auto& layer : *layers) x = layer->as<EncoderLayer>()->forward(x, src_mask);
  return final_norm ? final_norm->forward(x) : x;
}

}  // namespace nmt
