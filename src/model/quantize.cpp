#include "model/quantize.h"

#include <memory>
#include <stdexcept>

#include "core/error.h"
#include "cpu/int8_linear.h"
#include "model/linear.h"

namespace nmt {

std::string quantize_int8(Seq2Seq& model) {
  if (!cpu::int8_available()) {
    throw Error(
        "--quantization int8: this nmt was built without oneDNN (apt-get install libdnnl-dev, "
        "then rebuild); use --quantization none");
  }
  for (const auto& parameter : model->parameters()) {
    if (!parameter.device().is_cpu()) {
      throw Error("--quantization int8 decodes on the CPU only (the model is on " +
                  parameter.device().str() + "); use --device cpu, or --precision bf16 on CUDA");
    }
  }
  int64_t layers = 0;
  try {
    for (const auto& module : model->modules(/*include_self=*/false)) {
      if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) {
        linear->int8 = std::make_shared<const cpu::Int8Linear>(linear->weight, linear->bias);
        ++layers;
      }
    }
    auto& decoder = model->decoder;
    if (!decoder->output) {
      decoder->tied_int8 = std::make_shared<const cpu::Int8Linear>(
          decoder->embeddings->token_weight(), decoder->output_bias);
      ++layers;
    }
  } catch (const std::exception& e) {
    throw Error(std::string("--quantization int8: ") + e.what());
  }
  return "int8 weights for " + std::to_string(layers) + " linear layers (" + cpu::int8_describe() +
         ")";
}

}  // namespace nmt
