// nmt's Seq2Seq parameters as the variables of CTranslate2's TransformerSpec (the names and
// layout of python/ctranslate2/specs/transformer_spec.py with TransformerSpec.from_config's
// defaults: one source embedding, absolute positions, no relative attention or alibi).
#include "export/ctranslate2_spec.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/modules/normalization.h>

#include "core/error.h"

namespace nmt::ct2 {
namespace {

using Variables = std::vector<Variable>;

/// CTranslate2's activation enum (include/ctranslate2/ops/activation.h, common_spec.Activation):
/// ReLU 0, GELUTanh 1, Swish 2, GELU 3 (the erf form, which at::gelu computes by default).
constexpr int64_t kCt2Relu = 0;
constexpr int64_t kCt2Gelu = 3;

/// nmt's parameters and buffers by module path ("decoder.layers.0.fc_q.weight"), detached,
/// float32, on the CPU.
class NamedWeights {
 public:
  explicit NamedWeights(const Seq2Seq& model) {
    for (const auto& item : model->named_parameters()) add(item.key(), item.value());
    for (const auto& item : model->named_buffers()) add(item.key(), item.value());
  }

  /// The tensor at `name`; a missing one means a model of another layout (an nmt::Error).
  const at::Tensor& get(const std::string& name) const {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) {
      throw Error("export: the model has no tensor '" + name +
                  "' (a checkpoint of another nmt version?)");
    }
    return found->second;
  }

 private:
  void add(const std::string& name, const at::Tensor& tensor) {
    tensors_.emplace(name, tensor.detach().to(at::kCPU, at::kFloat).contiguous());
  }

  std::map<std::string, at::Tensor> tensors_;
};

/// Rank-0 attributes, typed as the Python specs type them (bools are int8).
at::Tensor int8_attribute(int64_t value) {
  return at::scalar_tensor(value, at::TensorOptions().dtype(at::kChar));
}
at::Tensor int16_attribute(int64_t value) {
  return at::scalar_tensor(value, at::TensorOptions().dtype(at::kShort));
}

/// `scope`/gamma and `scope`/beta from the LayerNorm at `module`.
void add_layer_norm(Variables& out, const NamedWeights& weights, const std::string& scope,
                    const std::string& module) {
  out.push_back({scope + "/gamma", weights.get(module + ".weight")});
  out.push_back({scope + "/beta", weights.get(module + ".bias")});
}

/// `scope`/weight [out, in] and `scope`/bias [out] of the Linear layers at `modules`, stacked
/// along their outputs when there are several (the converters' utils.fuse_linear).
void add_linear(Variables& out, const NamedWeights& weights, const std::string& scope,
                const std::vector<std::string>& modules) {
  std::vector<at::Tensor> matrices, biases;
  for (const auto& module : modules) {
    matrices.push_back(weights.get(module + ".weight"));
    biases.push_back(weights.get(module + ".bias"));
  }
  out.push_back({scope + "/weight", matrices.size() == 1 ? matrices[0] : at::cat(matrices, 0)});
  out.push_back({scope + "/bias", biases.size() == 1 ? biases[0] : at::cat(biases, 0)});
}

/// Self-attention (`cross` false): linear_0 = [q; k; v], linear_1 = output. Cross-attention:
/// linear_0 = q, linear_1 = [k; v], linear_2 = output (attention_spec.py; the loader splits
/// the fused rows in this order, src/layers/attention.cc).
void add_attention(Variables& out, const NamedWeights& weights, const std::string& scope,
                   const std::string& module, const std::string& norm, bool cross) {
  add_layer_norm(out, weights, scope + "/layer_norm", norm);
  const std::string q = module + ".fc_q", k = module + ".fc_k", v = module + ".fc_v";
  if (cross) {
    add_linear(out, weights, scope + "/linear_0", {q});
    add_linear(out, weights, scope + "/linear_1", {k, v});
    add_linear(out, weights, scope + "/linear_2", {module + ".fc_o"});
  } else {
    add_linear(out, weights, scope + "/linear_0", {q, k, v});
    add_linear(out, weights, scope + "/linear_1", {module + ".fc_o"});
  }
}

/// ffn/layer_norm, ffn/linear_0 (fc_1, followed by the activation), ffn/linear_1 (fc_2).
void add_feedforward(Variables& out, const NamedWeights& weights, const std::string& scope,
                     const std::string& layer) {
  add_layer_norm(out, weights, scope + "/ffn/layer_norm", layer + ".feedforward_norm");
  add_linear(out, weights, scope + "/ffn/linear_0", {layer + ".feedforward.fc_1"});
  add_linear(out, weights, scope + "/ffn/linear_1", {layer + ".feedforward.fc_2"});
}

/// The attributes both stacks carry: heads, norm placement, activation, and the embedding
/// scale flag (nmt multiplies token embeddings by sqrt(d_model), which is what the flag means).
void add_stack_attributes(Variables& out, const std::string& scope, const ModelConfig& config) {
  out.push_back({scope + "/num_heads", int16_attribute(config.n_heads)});
  out.push_back({scope + "/pre_norm", int8_attribute(config.norm == Norm::kPre)});
  out.push_back({scope + "/activation",
                 int8_attribute(config.activation == Activation::kGelu ? kCt2Gelu : kCt2Relu)});
  out.push_back({scope + "/scale_embeddings", int8_attribute(1)});
}

/// The position table of `stack` ("encoder"/"decoder"), [max_len, d_model], added after the
/// scaled token embedding at positions 0, 1, ... as nmt adds it.
const at::Tensor& position_table(const NamedWeights& weights, const std::string& stack,
                                 const ModelConfig& config) {
  return weights.get(stack + (config.positions == Positions::kLearned
                                  ? ".embeddings.positions.weight"
                                  : ".embeddings.sinusoid"));
}

void add_encoder(Variables& out, const NamedWeights& weights, const ModelConfig& config) {
  add_stack_attributes(out, "encoder", config);
  out.push_back({"encoder/embeddings_merge", int8_attribute(0)});  // concat; one embedding
  out.push_back({"encoder/multi_query_attention", int8_attribute(0)});
  out.push_back({"encoder/embeddings_0/weight", weights.get("encoder.embeddings.tokens.weight")});
  out.push_back(
      {"encoder/position_encodings/encodings", position_table(weights, "encoder", config)});
  if (config.norm == Norm::kPre) {
    add_layer_norm(out, weights, "encoder/layer_norm", "encoder.final_norm");
  }
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    const std::string scope = "encoder/layer_" + std::to_string(i);
    const std::string layer = "encoder.layers." + std::to_string(i);
    add_attention(out, weights, scope + "/self_attention", layer + ".self_attention",
                  layer + ".self_attention_norm", /*cross=*/false);
    add_feedforward(out, weights, scope, layer);
  }
}

/// The decoder's attributes beyond add_stack_attributes, at the values the Python spec writes
/// for a plain Transformer (alignment from the last layer's first head, no alibi).
void add_decoder_attributes(Variables& out) {
  out.push_back({"decoder/alignment_layer", int16_attribute(-1)});
  out.push_back({"decoder/alignment_heads", int16_attribute(1)});
  out.push_back({"decoder/alibi", int8_attribute(0)});
  out.push_back({"decoder/alibi_use_positive_positions", int8_attribute(0)});
  out.push_back({"decoder/scale_alibi", int8_attribute(0)});
  out.push_back({"decoder/start_from_zero_embedding", int8_attribute(0)});
}

void add_decoder(Variables& out, const NamedWeights& weights, const ModelConfig& config) {
  add_stack_attributes(out, "decoder", config);
  add_decoder_attributes(out);
  // Shared embeddings live in the encoder's module; with_aliases() stores the table once.
  const at::Tensor& tokens =
      weights.get(config.share_embeddings ? "encoder.embeddings.tokens.weight"
                                          : "decoder.embeddings.tokens.weight");
  out.push_back({"decoder/embeddings/weight", tokens});
  out.push_back(
      {"decoder/position_encodings/encodings", position_table(weights, "decoder", config)});
  if (config.norm == Norm::kPre) {
    add_layer_norm(out, weights, "decoder/layer_norm", "decoder.final_norm");
  }
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    const std::string scope = "decoder/layer_" + std::to_string(i);
    const std::string layer = "decoder.layers." + std::to_string(i);
    add_attention(out, weights, scope + "/self_attention", layer + ".self_attention",
                  layer + ".self_attention_norm", /*cross=*/false);
    add_attention(out, weights, scope + "/attention", layer + ".cross_attention",
                  layer + ".cross_attention_norm", /*cross=*/true);
    add_feedforward(out, weights, scope, layer);
  }
  if (config.tie_output) {  // logits = hidden · target embeddingᵀ + output_bias
    out.push_back({"decoder/projection/weight", tokens});
    out.push_back({"decoder/projection/bias", weights.get("decoder.output_bias")});
  } else {
    add_linear(out, weights, "decoder/projection", {"decoder.output"});
  }
}

}  // namespace

std::vector<Variable> transformer_variables(const Seq2Seq& model) {
  const ModelConfig& config = model->config();
  const NamedWeights weights(model);
  Variables out;
  add_encoder(out, weights, config);
  add_decoder(out, weights, config);
  return out;
}

double layer_norm_epsilon(const Seq2Seq& model) {
  std::optional<double> epsilon;
  for (const auto& module : model->modules()) {
    const auto* norm = module->as<torch::nn::LayerNorm>();
    if (norm == nullptr) continue;
    if (!norm->options.elementwise_affine()) {
      throw Error(
          "export: a LayerNorm without gain and bias cannot be stored in CTranslate2's "
          "TransformerSpec");
    }
    if (epsilon && *epsilon != norm->options.eps()) {
      throw Error("export: the model's LayerNorms use different epsilons (" +
                  std::to_string(*epsilon) + ", " + std::to_string(norm->options.eps()) +
                  "); CTranslate2 has one layer_norm_epsilon per model");
    }
    epsilon = norm->options.eps();
  }
  return epsilon.value_or(torch::nn::LayerNormOptions({1}).eps());
}

}  // namespace nmt::ct2
