#include "model/seq2seq.h"

#include <cmath>
#include <set>

#include <torch/nn/init.h>

#include "core/error.h"
#include "core/special_ids.h"
#include "model/masks.h"

namespace nmt {
namespace {

const ModelConfig& checked(const ModelConfig& config) {
  if (config.src_vocab_size <= 0 || config.tgt_vocab_size <= 0) {
    throw Error("model.src_vocab_size and model.tgt_vocab_size must be set (> 0) to build a model");
  }
  config.validate();
  return config;
}

}  // namespace

Seq2SeqImpl::Seq2SeqImpl(const ModelConfig& config, bool initialize) : config_(checked(config)) {
  encoder = register_module("encoder", Encoder(config_));
  decoder = register_module(
      "decoder",
      Decoder(config_, config_.share_embeddings ? encoder->embeddings->tokens : nullptr));
  // Xavier-uniform for every matrix, as in the classic tutorial; biases and norms keep defaults.
  // Token embeddings instead get N(0, 1/d_model) (Vaswani et al. 2017; fairseq): scaled by
  // sqrt(d_model) in the forward pass they have unit variance, on a par with sinusoidal positions
  // (Xavier's ~0.014 would leave them 4× weaker than the positions at d=128 and slowed a run's
  // start severalfold here), and as a tied output projection they give unit-scale logits.
  if (!initialize) return;
  torch::NoGradGuard no_grad;
  for (auto& parameter : parameters()) {
    if (parameter.dim() > 1) torch::nn::init::xavier_uniform_(parameter);
  }
  for (auto* embeddings : {&encoder->embeddings, &decoder->embeddings}) {
    torch::nn::init::normal_((*embeddings)->tokens->weight, 0.0,
                             1.0 / std::sqrt(double(config_.d_model)));
  }
}

at::Tensor Seq2SeqImpl::make_src_mask(const at::Tensor& src) const {
  return make_padding_mask(src, kPadId);
}

at::Tensor Seq2SeqImpl::make_tgt_mask(const at::Tensor& tgt) const {
  return make_target_mask(tgt, kPadId);
}

at::Tensor Seq2SeqImpl::encode(const at::Tensor& src, const at::Tensor& src_mask) {
  return encoder->forward(src, src_mask);
}

std::tuple<at::Tensor, at::Tensor> Seq2SeqImpl::decode(const at::Tensor& tgt_in,
                                                       const at::Tensor& memory,
                                                       const at::Tensor& src_mask) {
  return decoder->forward(tgt_in, memory, make_tgt_mask(tgt_in), src_mask);
}

at::Tensor Seq2SeqImpl::forward(const at::Tensor& src, const at::Tensor& tgt_in) {
  return decoder->project(forward_hidden(src, tgt_in));
}

at::Tensor Seq2SeqImpl::forward_hidden(const at::Tensor& src, const at::Tensor& tgt_in) {
  const auto src_mask = make_src_mask(src);
  const auto memory = encode(src, src_mask);
  return decoder->hidden(tgt_in, memory, make_tgt_mask(tgt_in), src_mask).hidden;
}

int64_t count_parameters(const torch::nn::Module& module) {
  std::set<const void*> seen;
  int64_t total = 0;
  for (const auto& parameter : module.parameters()) {
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) total += parameter.numel();
  }
  return total;
}

}  // namespace nmt
