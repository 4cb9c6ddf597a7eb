#pragma once

// The model.bin side of the CTranslate2 export (export/ctranslate2.h): nmt's weights as the
// variables of CTranslate2's TransformerSpec, their aliases and quantization, and the file's
// binary layout. Internal to export/ and its tests. The layout follows CTranslate2 4.x:
// python/ctranslate2/specs/{model_spec,transformer_spec,attention_spec,common_spec}.py (what the
// converters write) and src/models/model.cc (what the loader reads).

#include <ATen/ATen.h>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cpu/int8_linear.h"
#include "export/ctranslate2.h"
#include "model/seq2seq.h"

namespace nmt::ct2 {

inline constexpr uint32_t kBinaryVersion = 6;                ///< CURRENT_BINARY_VERSION
inline constexpr const char* kSpecName = "TransformerSpec";  ///< the loader's model name
inline constexpr uint32_t kSpecRevision = 7;                 ///< TransformerSpec.revision (3.10+)

/// One model.bin variable: a weight, or an attribute stored as a rank-0 tensor (flags as int8,
/// num_heads as int16, as the Python specs store them).
struct Variable {
  std::string name;  ///< scope path, e.g. "encoder/layer_0/ffn/linear_0/weight"
  at::Tensor value;  ///< CPU, contiguous: float32, int8 or int16
};

/// What model.bin holds: variables sorted by name, then aliases (alias name, variable name),
/// sorted by alias name.
struct ModelBin {
  std::vector<Variable> variables;
  std::vector<std::pair<std::string, std::string>> aliases;
};

/// The TransformerSpec variables of `model`, float32, in no particular order and with shared
/// tensors repeated under each name (with_aliases() folds them). The mapping:
///  - attention: fc_q, fc_k, fc_v stacked into self_attention/linear_0 (q, k, v rows), fc_o is
///    linear_1; cross-attention: fc_q is attention/linear_0, fc_k and fc_v stacked are
///    linear_1, fc_o is linear_2; each sublayer's LayerNorm is its layer_norm (gamma, beta);
///  - feed-forward: fc_1, fc_2 are ffn/linear_0, linear_1; feedforward_norm is ffn/layer_norm;
///  - positions, learned or sinusoidal, are stored as position_encodings/encodings: the table
///    CTranslate2 would generate for sinusoidal positions is another one (sin and cos halves
///    concatenated, positions from 1), nmt's interleaves them from position 0;
///  - the final LayerNorms of pre-norm are encoder/layer_norm and decoder/layer_norm;
///  - the output projection is decoder/projection (the target embedding when tied).
std::vector<Variable> transformer_variables(const Seq2Seq& model);

/// The epsilon of the model's LayerNorms (config.json's layer_norm_epsilon). CTranslate2 has
/// one for the whole model: differing ones, or a LayerNorm without gain and bias, are an
/// nmt::Error.
double layer_norm_epsilon(const Seq2Seq& model);

/// Sorts `variables` by name and stores every tensor equal to an earlier one (same dtype, shape
/// and values) as an alias of the first, as model_spec.py's _alias_variables does (shared
/// embeddings, tied projections, the two identical sinusoid tables). Attributes never alias.
ModelBin with_aliases(std::vector<Variable> variables);

/// int8 rows (cpu/int8_linear.h): the integers nmt's own int8 decoding multiplies.
using cpu::quantize_int8_rows;
using cpu::Quantized;

/// int16 with one scale: 2^10 / max|weight| (10 bits, so that products leave 12 bits of int32
/// headroom for accumulation), values = round-half-even(weight·scale) clipped to int16;
/// scale rank 0. An all-zero matrix gets scale 1 (Python would divide by zero).
Quantized quantize_int16(const at::Tensor& weight);

/// Quantizes every ".../weight" variable (embeddings and linear layers, the variables CTranslate2
/// quantizes) in place and adds its ".../weight_scale"; float32 leaves `bin` as it is.
void quantize(ModelBin& bin, Ct2Quantization quantization);

/// model.bin's bytes as pieces for write_file_atomically: little-endian header fields, and
/// views of the tensors' own memory (so `bin` must outlive this object; no copy of the weights
/// is made). A variable above the format's limits (4 GiB, 255 dimensions, 65,534-byte names)
/// is an nmt::Error naming it.
class ModelBinBytes {
 public:
  explicit ModelBinBytes(const ModelBin& bin);
  ModelBinBytes(const ModelBinBytes&) = delete;
  ModelBinBytes& operator=(const ModelBinBytes&) = delete;

  const std::vector<std::string_view>& pieces() const { return pieces_; }

 private:
  void u8(uint8_t value);
  void u16(uint16_t value);
  void u32(uint32_t value);
  void text(const std::string& value);  ///< uint16 length + 1, the bytes, a NUL
  void add_variable(const Variable& variable);
  void payload(const at::Tensor& tensor);
  void flush();

  std::string header_;             ///< header bytes not yet in pieces_
  std::deque<std::string> owned_;  ///< flushed header bytes (a deque keeps them in place)
  std::vector<std::string_view> pieces_;
};

}  // namespace nmt::ct2
