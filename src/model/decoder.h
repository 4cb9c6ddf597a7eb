#pragma once

#include <memory>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/normalization.h>

#include "core/config.h"
#include "model/attention.h"
#include "model/embeddings.h"
#include "model/feedforward.h"
#include "model/linear.h"

namespace nmt {

/// One decoder layer's cached state for incremental decoding.
struct LayerCache {
  KeyValue self;   ///< self-attention keys/values of the positions decoded so far (grows)
  KeyValue cross;  ///< encoder output projected by this layer's cross-attention (fixed)
};

/// The decoder's cache: one entry per layer and the number of positions decoded so far.
struct DecoderCache {
  std::vector<LayerCache> layers;
  int64_t length = 0;
  /// Decoded rows per source (beam search: the beam size). The cross-attention keys and values
  /// (and the source mask that goes with them) hold one row per source, and the decoder attends
  /// from the `group` consecutive rows of a source together, as one longer query: beam× less
  /// cache to keep and reorder, and attention matmuls over `group` queries instead of one.
  int64_t group = 1;

  /// Keeps batch rows `index` (int64 [new_batch]) of every cached tensor, in that order
  /// (beam search reorders hypotheses; finished sentences are dropped). With groups, `index`
  /// takes whole groups (each block of `group` new rows continues rows of one source) and the
  /// cross rows follow the sources. With `self_only` the cross-attention rows stay as they are:
  /// the caller knows that no source left.
  void select(const at::Tensor& index, bool self_only = false);
  /// The source of each group of `index` (see select): the source rows to keep.
  at::Tensor source_index(const at::Tensor& index) const;
};

/// Decoder layer (Vaswani et al. 2017, §3.1): causal self-attention, attention over the encoder
/// output, feed-forward; each a residual sublayer with LayerNorm.
class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelConfig& config);

  /// Whole target sequence. x [batch, tgt_len, d_model], memory [batch, src_len, d_model],
  /// tgt_mask [batch, 1, tgt_len, tgt_len], src_mask [batch, 1, 1, src_len].
  /// Returns [batch, tgt_len, d_model] and, with need_weights, the cross-attention weights
  /// [batch, heads, tgt_len, src_len].
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x, const at::Tensor& memory,
                                             const at::Tensor& tgt_mask, const at::Tensor& src_mask,
                                             bool need_weights = false);

  /// New positions only, x [batch, new_len, d_model], attending to the cached positions and
  /// themselves (causally); appends their keys/values to `cache.self`. With `group` > 1 the
  /// cross-attention cache and src_mask hold one row per `group` rows of x (DecoderCache::group).
  std::tuple<at::Tensor, at::Tensor> step(const at::Tensor& x, LayerCache& cache,
                                          const at::Tensor& src_mask, bool need_weights = false,
                                          int64_t group = 1);

  MultiHeadAttention self_attention{nullptr}, cross_attention{nullptr};
  PositionwiseFeedforward feedforward{nullptr};
  torch::nn::LayerNorm self_attention_norm{nullptr}, cross_attention_norm{nullptr},
      feedforward_norm{nullptr};
  Dropout dropout{nullptr};

 private:
  /// The cross-attention and feed-forward sublayers shared by forward() and step().
  std::tuple<at::Tensor, at::Tensor> cross_and_feedforward(const at::Tensor& x,
                                                           const KeyValue& memory_kv,
                                                           const at::Tensor& src_mask,
                                                           bool need_weights);
  bool pre_norm_;
};
TORCH_MODULE(DecoderLayer);

/// What the decoder produces for a whole target sequence.
struct DecoderOutput {
  at::Tensor hidden;                  ///< [batch, tgt_len, d_model], before the projection
  std::vector<at::Tensor> attention;  ///< per layer [batch, heads, tgt_len, src_len] if asked
};

/// Some rows of a decoder's output projection (DecoderImpl::output_rows).
struct OutputRows {
  at::Tensor ids;     ///< int64 [k]: the target ids, in the order of the logits
  at::Tensor weight;  ///< [k, d_model]
  at::Tensor bias;    ///< [k], or undefined
  std::shared_ptr<const cpu::InferenceLinear> twin;  ///< weight and bias for a CPU kernel, or null
};

/// Target embeddings, a stack of decoder layers and the projection to the target vocabulary.
class DecoderImpl : public torch::nn::Module {
 public:
  /// `shared_tokens`: the encoder's token table when source and target embeddings are shared.
  explicit DecoderImpl(const ModelConfig& config, torch::nn::Embedding shared_tokens = nullptr);

  /// Teacher-forced pass: tgt [batch, tgt_len] -> logits [batch, tgt_len, tgt_vocab] and the
  /// last layer's cross-attention [batch, heads, tgt_len, src_len].
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& tgt, const at::Tensor& memory,
                                             const at::Tensor& tgt_mask,
                                             const at::Tensor& src_mask);

  /// Hidden states only (the trainer projects just the non-padding positions).
  DecoderOutput hidden(const at::Tensor& tgt, const at::Tensor& memory, const at::Tensor& tgt_mask,
                       const at::Tensor& src_mask, bool need_weights = false);

  /// hidden [..., d_model] -> logits [..., tgt_vocab] (tied to the target embedding if asked).
  at::Tensor project(const at::Tensor& hidden);

  /// The output projection cut to the target ids `ids` (int64 [k], a lexical shortlist's
  /// candidates, decode/shortlist.h): their rows of the weight and bias, laid out as project()'s
  /// own twin is (int8, packed float32) when it has one.
  OutputRows output_rows(const at::Tensor& ids);
  /// hidden [..., d_model] -> logits [..., k] over rows.ids only.
  at::Tensor project(const at::Tensor& hidden, const OutputRows& rows);

  /// A cache for incremental decoding over `memory` [batch, src_len, d_model].
  DecoderCache start(const at::Tensor& memory);

  /// Decodes the next positions `tokens` [batch, new_len] given the cache (which grows).
  /// Returns hidden states [batch, new_len, d_model] and per-layer cross-attention if asked.
  /// src_mask has one row per source: batch / cache.group rows.
  DecoderOutput step(const at::Tensor& tokens, DecoderCache& cache, const at::Tensor& src_mask,
                     bool need_weights = false);

  Embeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};  ///< only with pre-norm
  Linear output{nullptr};                    ///< untied output projection, or null
  at::Tensor output_bias;                    ///< bias of the tied projection, or undefined
  /// the tied projection laid out for a CPU kernel (model/quantize.h), or null
  std::shared_ptr<const cpu::InferenceLinear> tied_twin;
};
TORCH_MODULE(Decoder);

}  // namespace nmt
