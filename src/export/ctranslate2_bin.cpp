// model.bin: aliases, quantization and the binary layout of CTranslate2's model_spec.py
// (ModelSpec._serialize), read by src/models/model.cc (Model::load) on the other side.
#include "export/ctranslate2_spec.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace nmt::ct2 {
namespace {

/// DataType ids of include/ctranslate2/types.h (model_spec.py _dtype_to_type_id).
uint8_t ct2_dtype_id(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return 0;
    case at::kChar:
      return 1;
    case at::kShort:
      return 2;
    case at::kInt:
      return 3;
    case at::kHalf:
      return 4;
    case at::kBFloat16:
      return 5;
    default:
      TORCH_CHECK(false, "model.bin cannot store dtype ", type);
  }
  return 0;  // unreachable
}

/// model.bin is little-endian, and tensor payloads are written from memory as they are.
bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool same_tensor_values(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes().equals(b.sizes()) && at::equal(a, b);
}

void sort_by_name(std::vector<Variable>& variables) {
  std::sort(variables.begin(), variables.end(),
            [](const Variable& a, const Variable& b) { return a.name < b.name; });
}

}  // namespace

ModelBin with_aliases(std::vector<Variable> variables) {
  sort_by_name(variables);
  ModelBin bin;
  for (auto& variable : variables) {
    // The first equal one in name order is never an alias itself, so comparing with the kept
    // variables gives model_spec.py's choice: every copy points at the alphabetically first.
    std::string target;
    if (variable.value.dim() > 0) {
      for (const auto& kept : bin.variables) {
        if (same_tensor_values(kept.value, variable.value)) {
          target = kept.name;
          break;
        }
      }
    }
    if (target.empty()) {
      bin.variables.push_back(std::move(variable));
    } else {
      bin.aliases.emplace_back(variable.name, target);
    }
  }
  return bin;
}

Quantized quantize_int16(const at::Tensor& weight) {
  TORCH_CHECK(weight.scalar_type() == at::kFloat, "quantize_int16: expected float32, got ",
              weight.scalar_type());
  const float amax = weight.numel() == 0 ? 0.0f : weight.abs().max().item<float>();
  const float scale = amax > 0.0f ? 1024.0f / amax : 1.0f;
  const auto values = at::round(weight * scale)
                          .clamp_min(static_cast<double>(std::numeric_limits<int16_t>::min()))
                          .clamp_max(static_cast<double>(std::numeric_limits<int16_t>::max()))
                          .to(at::kShort);
  return {values.contiguous(), at::scalar_tensor(scale, at::TensorOptions().dtype(at::kFloat))};
}

void quantize(ModelBin& bin, Ct2Quantization quantization) {
  if (quantization == Ct2Quantization::kFloat32) return;
  std::vector<Variable> scales;
  for (auto& variable : bin.variables) {
    if (!ends_with(variable.name, "/weight")) continue;
    Quantized q = quantization == Ct2Quantization::kInt8 ? quantize_int8_rows(variable.value)
                                                         : quantize_int16(variable.value);
    variable.value = q.values;
    scales.push_back({variable.name + "_scale", q.scale});
  }
  for (auto& scale : scales) bin.variables.push_back(std::move(scale));
  sort_by_name(bin.variables);
}

ModelBinBytes::ModelBinBytes(const ModelBin& bin) {
  if (!host_is_little_endian()) {
    throw Error("export: model.bin is little-endian; this host is not (not supported)");
  }
  u32(kBinaryVersion);
  text(kSpecName);
  u32(kSpecRevision);
  u32(static_cast<uint32_t>(bin.variables.size()));
  for (const auto& variable : bin.variables) add_variable(variable);
  u32(static_cast<uint32_t>(bin.aliases.size()));
  for (const auto& [alias, name] : bin.aliases) {
    text(alias);
    text(name);
  }
  flush();
}

void ModelBinBytes::u8(uint8_t value) { header_.push_back(static_cast<char>(value)); }

void ModelBinBytes::u16(uint16_t value) {
  for (int byte = 0; byte < 2; ++byte) u8(static_cast<uint8_t>(value >> (8 * byte)));
}

void ModelBinBytes::u32(uint32_t value) {
  for (int byte = 0; byte < 4; ++byte) u8(static_cast<uint8_t>(value >> (8 * byte)));
}

void ModelBinBytes::text(const std::string& value) {
  if (value.size() + 1 > std::numeric_limits<uint16_t>::max()) {
    throw Error("export: name too long for model.bin (" + std::to_string(value.size()) +
                " bytes): " + value.substr(0, 80) + "...");
  }
  u16(static_cast<uint16_t>(value.size() + 1));
  header_ += value;
  u8(0);
}

void ModelBinBytes::add_variable(const Variable& variable) {
  const at::Tensor& value = variable.value;
  constexpr auto kMax = std::numeric_limits<uint32_t>::max();
  if (value.dim() > std::numeric_limits<uint8_t>::max() || value.nbytes() > kMax) {
    throw Error("export: variable " + variable.name + " (" + std::to_string(value.nbytes()) +
                " bytes, " + std::to_string(value.dim()) +
                " dimensions) exceeds model.bin's limits of 4 GiB and 255 dimensions");
  }
  text(variable.name);
  u8(static_cast<uint8_t>(value.dim()));
  for (const int64_t size : value.sizes()) u32(static_cast<uint32_t>(size));
  u8(ct2_dtype_id(value.scalar_type()));
  u32(static_cast<uint32_t>(value.nbytes()));
  payload(value);
}

void ModelBinBytes::payload(const at::Tensor& tensor) {
  TORCH_CHECK(tensor.is_contiguous() && tensor.device().is_cpu(),
              "model.bin payloads must be contiguous CPU tensors");
  flush();
  if (tensor.nbytes() > 0) {
    pieces_.emplace_back(static_cast<const char*>(tensor.data_ptr()), tensor.nbytes());
  }
}

void ModelBinBytes::flush() {
  if (header_.empty()) return;
  owned_.push_back(std::move(header_));
  header_.clear();
  pieces_.emplace_back(owned_.back());
}

}  // namespace nmt::ct2
