#include "model/quantize.h"

#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/error.h"
#include "cpu/int8_linear.h"
#include "cpu/packed_linear.h"
#include "model/embeddings.h"
#include "model/linear.h"

namespace nmt {

namespace {

using MakeTwin = std::function<std::shared_ptr<const cpu::InferenceLinear>(const at::Tensor& weight,
                                                                           const at::Tensor& bias)>;

/// Gives every linear layer of `model` the twin `make` builds; returns how many it gave.
/// `what` names the option in errors ("--quantization int8").
/// Throws unless every parameter of `model` is on the CPU; `what` names the option.
void require_cpu(Seq2Seq& model, const std::string& what) {
  for (const auto& parameter : model->parameters()) {
    if (!parameter.device().is_cpu()) {
      throw Error(what + " decodes on the CPU only (the model is on " + parameter.device().str() +
                  "); use --device cpu, or --precision bf16 on CUDA");
    }
  }
}

int64_t set_twins(Seq2Seq& model, const std::string& what, const MakeTwin& make) {
  require_cpu(model, what);
  int64_t layers = 0;
  try {
    for (const auto& module : model->modules(/*include_self=*/false)) {
      if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) {
        linear->twin = make(linear->weight, linear->bias);
        ++layers;
      }
    }
    auto& decoder = model->decoder;
    if (!decoder->output) {
      decoder->tied_twin = make(decoder->embeddings->token_weight(), decoder->output_bias);
      ++layers;
    }
  } catch (const std::exception& e) {
    throw Error(what + ": " + e.what());
  }
  return layers;
}

}  // namespace

std::string quantize_int8(Seq2Seq& model) {
  if (!cpu::int8_available()) {
    throw Error(
        "--quantization int8: this nmt was built without oneDNN (apt-get install libdnnl-dev, "
        "then rebuild); use --quantization none");
  }
  require_cpu(model, "--quantization int8");  // before the tables change
  // CTranslate2 holds embedding tables in int8 as well and looks tokens up as q · (1 / scale):
  // the same values here (a shared table once), so that nmt's int8 decoding computes what its
  // CTranslate2 export does. Before the twins: a tied output projection quantizes this table
  // back to the same integers.
  std::set<const void*> tables;
  for (const auto& module : model->modules(/*include_self=*/false)) {
    auto embeddings = std::dynamic_pointer_cast<EmbeddingsImpl>(module);
    if (!embeddings) continue;
    auto& table = embeddings->tokens->weight;
    if (!tables.insert(table.data_ptr()).second) continue;
    torch::NoGradGuard no_grad;
    table.copy_(cpu::dequantize_int8_rows(cpu::quantize_int8_rows(table.to(at::kFloat))));
  }
  const int64_t layers =
      set_twins(model, "--quantization int8", [](const at::Tensor& weight, const at::Tensor& bias) {
        return std::make_shared<const cpu::Int8Linear>(weight, bias);
      });
  return "int8 weights for " + std::to_string(layers) + " linear layers (" + cpu::int8_describe() +
         ")";
}

bool packing_available() {
  const char* setting = std::getenv("NMT_PACKED_GEMM");
  const std::string value = setting != nullptr ? setting : "1";
  if (value != "0" && value != "1") {
    throw Error("NMT_PACKED_GEMM='" + value +
                "' is not valid: use 1 (float32 decoding with packed weights, the default) or 0 "
                "(LibTorch's linear layers)");
  }
  return value == "1" && cpu::gemm_isa() != cpu::GemmIsa::kNone;
}

std::string pack_float32(Seq2Seq& model) {
  if (!packing_available()) {
    throw Error(
        "packed float32 weights: this CPU has no packed GEMM kernel (it needs AVX2 and "
        "FMA), or NMT_PACKED_GEMM=0");
  }
  const int64_t layers = set_twins(model, "float32 decoding on the CPU",
                                   [](const at::Tensor& weight, const at::Tensor& bias) {
                                     return std::make_shared<const cpu::PackedLinear>(weight, bias);
                                   });
  return "float32 weights packed for the " + cpu::gemm_isa_name(cpu::gemm_isa()) +
         " GEMM kernel (" + std::to_string(layers) + " linear layers)";
}

void remove_twins(Seq2Seq& model) {
  for (const auto& module : model->modules(/*include_self=*/false)) {
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) linear->twin.reset();
  }
  model->decoder->tied_twin.reset();
}

int64_t release_twinned_weights(Seq2Seq& model) {
  const auto& kept = model->decoder->output;  // its rows make a shortlist's output layer
  int64_t bytes = 0;
  const auto release = [&](at::Tensor& tensor) {
    if (!tensor.defined() || tensor.numel() == 0) return;
    bytes += int64_t(tensor.nbytes());
    tensor.set_data(at::empty({0}, tensor.options()));  // the parameter list holds it too
  };
  for (const auto& module : model->modules(/*include_self=*/false)) {
    auto linear = std::dynamic_pointer_cast<LinearImpl>(module);
    if (!linear || !linear->twin || (kept && linear.get() == kept.get())) continue;
    release(linear->weight);
    release(linear->bias);
  }
  return bytes;
}

PackedWhileDecoding::PackedWhileDecoding(Seq2Seq& model, bool wanted) : model_(model) {
  if (!wanted || !packing_available()) return;
  for (const auto& parameter : model->parameters()) {
    if (!parameter.device().is_cpu() || parameter.scalar_type() != at::kFloat) return;
  }
  try {
    pack_float32(model_);
  } catch (...) {
    remove_twins(model_);  // a failure half-way must not leave twins on a model that trains
    throw;
  }
  packed_ = true;
}

PackedWhileDecoding::~PackedWhileDecoding() {
  if (packed_) remove_twins(model_);
}

}  // namespace nmt
