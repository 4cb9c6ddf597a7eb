#include "model/decoder.h"

#include "core/precision.h"
#include "model/masks.h"
#include "model/residual.h"

namespace nmt {
namespace {

torch::nn::LayerNorm layer_norm(int64_t d_model) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}));
}

/// The cached positions followed by the fresh ones, contiguous (at::cat's result is; the first
/// step's projection is a transposed view, copied once here rather than by every later matmul).
at::Tensor cat_or(const at::Tensor& cached, const at::Tensor& fresh) {
  return cached.defined() ? at::cat({cached, fresh}, /*dim=*/2) : fresh.contiguous();
}

}  // namespace

at::Tensor DecoderCache::source_index(const at::Tensor& index) const {
  if (group == 1) return index;
  TORCH_CHECK(index.numel() % group == 0, "DecoderCache::select: ", index.numel(),
              " rows are not whole groups of ", group);
  // The first row of each new group names its source: old row r belongs to source r / group.
  return index.view({-1, group}).select(1, 0).div(group, "floor");
}

void DecoderCache::select(const at::Tensor& index, bool self_only) {
  const at::Tensor sources = self_only ? at::Tensor() : source_index(index);
  for (auto& layer : layers) {
    if (layer.self.defined()) {
      layer.self.key = layer.self.key.index_select(0, index);
      layer.self.value = layer.self.value.index_select(0, index);
    }
    if (!self_only && layer.cross.defined()) {
      layer.cross.key = layer.cross.key.index_select(0, sources);
      layer.cross.value = layer.cross.value.index_select(0, sources);
    }
  }
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& config)
    : self_attention(register_module(
          "self_attention",
          MultiHeadAttention(config.d_model, config.n_heads, config.attention_dropout))),
      cross_attention(register_module(
          "cross_attention",
          MultiHeadAttention(config.d_model, config.n_heads, config.attention_dropout))),
      feedforward(register_module(
          "feedforward",
          PositionwiseFeedforward(config.d_model, config.d_ff, config.dropout, config.activation))),
      self_attention_norm(register_module("self_attention_norm", layer_norm(config.d_model))),
      cross_attention_norm(register_module("cross_attention_norm", layer_norm(config.d_model))),
      feedforward_norm(register_module("feedforward_norm", layer_norm(config.d_model))),
      dropout(register_module("dropout", Dropout(config.dropout))),
      pre_norm_(config.norm == Norm::kPre) {}

std::tuple<at::Tensor, at::Tensor> DecoderLayerImpl::cross_and_feedforward(
    const at::Tensor& x, const KeyValue& memory_kv, const at::Tensor& src_mask, bool need_weights) {
  at::Tensor weights;  // [batch, heads, tgt_len, src_len]
  auto h = residual(x, cross_attention_norm, dropout, pre_norm_, [&](const at::Tensor& in) {
    auto [out, w] = cross_attention->attend(in, memory_kv, src_mask, need_weights);
    weights = w;
    return out;
  });
  h = residual(h, feedforward_norm, dropout, pre_norm_,
               [&](const at::Tensor& in) { return feedforward->forward(in); });
  return {h, weights};
}

std::tuple<at::Tensor, at::Tensor> DecoderLayerImpl::forward(const at::Tensor& x,
                                                             const at::Tensor& memory,
                                                             const at::Tensor& tgt_mask,
                                                             const at::Tensor& src_mask,
                                                             bool need_weights) {
  auto h = residual(x, self_attention_norm, dropout, pre_norm_, [&](const at::Tensor& in) {
    const auto in_mm = autocast_input(in);
    return std::get<0>(
        self_attention->attend(in_mm, self_attention->project(in_mm, in_mm), tgt_mask, false));
  });
  return cross_and_feedforward(h, cross_attention->project(memory, memory), src_mask, need_weights);
}

std::tuple<at::Tensor, at::Tensor> DecoderLayerImpl::step(const at::Tensor& x, LayerCache& cache,
                                                          const at::Tensor& src_mask,
                                                          bool need_weights, int64_t group) {
  auto h = residual(x, self_attention_norm, dropout, pre_norm_, [&](const at::Tensor& in) {
    const auto in_mm = autocast_input(in);
    const KeyValue fresh =
        self_attention->project(in_mm, in_mm);  // [batch, heads, new_len, head_dim]
    cache.self = {cat_or(cache.self.key, fresh.key), cat_or(cache.self.value, fresh.value)};
    // New positions see every cached position and, among themselves, only earlier ones; one
    // new position (every step after a forced prefix) sees them all, so it needs no mask.
    const int64_t new_len = in.size(1);
    const int64_t total = cache.self.key.size(2);
    at::Tensor mask;
    if (new_len > 1) {
      mask = make_causal_mask(total, in.device()).narrow(2, total - new_len, new_len);
    }
    return std::get<0>(self_attention->attend(in_mm, cache.self, mask, false));
  });
  if (group == 1) return cross_and_feedforward(h, cache.cross, src_mask, need_weights);
  // The rows of one source attend to it together: [rows, len, d] as [sources, group * len, d]
  // (the sublayers after self-attention work position by position, so only the shape changes).
  const int64_t rows = h.size(0), len = h.size(1);
  auto [out, weights] = cross_and_feedforward(h.reshape({rows / group, group * len, h.size(2)}),
                                              cache.cross, src_mask, need_weights);
  out = out.reshape({rows, len, out.size(2)});
  if (weights.defined()) {  // [sources, heads, group * len, src] -> [rows, heads, len, src]
    const int64_t heads = weights.size(1), src_len = weights.size(3);
    weights = weights.view({rows / group, heads, group, len, src_len})
                  .permute({0, 2, 1, 3, 4})
                  .reshape({rows, heads, len, src_len});
  }
  return {out, weights};
}

DecoderImpl::DecoderImpl(const ModelConfig& config, torch::nn::Embedding shared_tokens)
    : embeddings(register_module(
          "embeddings",
          Embeddings(config.tgt_vocab_size, config.d_model, config.max_len, config.positions,
                     config.dropout, config.word_dropout, shared_tokens))),
      layers(register_module("layers", torch::nn::ModuleList())) {
  for (int64_t i = 0; i < config.decoder_layers; ++i) layers->push_back(DecoderLayer(config));
  if (config.norm == Norm::kPre)
    final_norm = register_module("final_norm", layer_norm(config.d_model));
  if (config.tie_output) {
    output_bias = register_parameter("output_bias", at::zeros({config.tgt_vocab_size}));
  } else {
    output = register_module("output", Linear(config.d_model, config.tgt_vocab_size));
  }
}

DecoderOutput DecoderImpl::hidden(const at::Tensor& tgt, const at::Tensor& memory,
                                  const at::Tensor& tgt_mask, const at::Tensor& src_mask,
                                  bool need_weights) {
  DecoderOutput out;
  auto x = embeddings->forward(tgt);              // [batch, tgt_len, d_model]
  const auto memory_in = autocast_input(memory);  // read by every layer's cross-attention
  for (const auto& layer : *layers) {
    auto [h, weights] =
        layer->as<DecoderLayer>()->forward(x, memory_in, tgt_mask, src_mask, need_weights);
    x = h;
    if (need_weights) out.attention.push_back(weights);
  }
  out.hidden = final_norm ? final_norm->forward(x) : x;
  return out;
}

at::Tensor DecoderImpl::project(const at::Tensor& hidden_states) {
  if (output) return output->forward(hidden_states);
  if (tied_twin) return tied_twin->forward(hidden_states);
  return at::linear(hidden_states, embeddings->token_weight(), output_bias);
}

OutputRows DecoderImpl::output_rows(const at::Tensor& ids) {
  OutputRows rows;
  rows.ids = ids;
  const auto weight = output ? output->weight : embeddings->token_weight();
  const auto bias = output ? output->bias : output_bias;
  const auto index = ids.to(weight.device());
  rows.weight = weight.index_select(0, index);
  if (bias.defined()) rows.bias = bias.index_select(0, index);
  const auto& twin = output ? output->twin : tied_twin;
  if (twin) rows.twin = twin->like(rows.weight, rows.bias);
  return rows;
}

at::Tensor DecoderImpl::project(const at::Tensor& hidden_states, const OutputRows& rows) {
  if (rows.twin) return rows.twin->forward(hidden_states);
  return at::linear(hidden_states, rows.weight, rows.bias);
}

std::tuple<at::Tensor, at::Tensor> DecoderImpl::forward(const at::Tensor& tgt,
                                                        const at::Tensor& memory,
                                                        const at::Tensor& tgt_mask,
                                                        const at::Tensor& src_mask) {
  auto out = hidden(tgt, memory, tgt_mask, src_mask, /*need_weights=*/true);
  return {project(out.hidden), out.attention.back()};
}

DecoderCache DecoderImpl::start(const at::Tensor& memory) {
  DecoderCache cache;
  const auto memory_in = autocast_input(memory);
  for (const auto& layer : *layers) {
    auto& cross = layer->as<DecoderLayer>()->cross_attention;
    // Contiguous once here: as split_heads' transposed views, every step's two matmuls over
    // them would copy them again.
    const KeyValue kv = cross->project(memory_in, memory_in);
    cache.layers.push_back({KeyValue{}, {kv.key.contiguous(), kv.value.contiguous()}});
  }
  return cache;
}

DecoderOutput DecoderImpl::step(const at::Tensor& tokens, DecoderCache& cache,
                                const at::Tensor& src_mask, bool need_weights) {
  DecoderOutput out;
  auto x = embeddings->forward(tokens, cache.length);  // [batch, new_len, d_model]
  for (size_t i = 0; i < layers->size(); ++i) {
    auto [h, weights] = layers[i]->as<DecoderLayer>()->step(x, cache.layers[i], src_mask,
                                                            need_weights, cache.group);
    x = h;
    if (need_weights) out.attention.push_back(weights);
  }
  cache.length += tokens.size(1);
  out.hidden = final_norm ? final_norm->forward(x) : x;
  return out;
}

}  // namespace nmt
