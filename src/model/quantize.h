#pragma once

#include <string>

#include "model/seq2seq.h"

namespace nmt {

// Weights laid out once for a CPU kernel, for decoding: every linear layer of a model gets a
// twin (model/linear.h) for the attention and feed-forward projections and the output
// projection, tied or not. The float weights stay (checkpoints and export read them) unless
// release_twinned_weights drops them. For CPU decoding only: each throws an nmt::Error when the
// model is not on the CPU, and returns what it did, for the log.

/// int8 weights (decode.quantization = int8, cpu/int8_linear.h): "int8 weights for 38 linear
/// layers (oneDNN int8 on avx512_core_bf16, 8-bit activations)". The token embedding tables are
/// replaced by their int8 values dequantized, as CTranslate2 looks them up, for good
/// (remove_twins does not restore them): for models loaded to decode. Throws when the build has
/// no int8 backend.
std::string quantize_int8(Seq2Seq& model);

/// Whether pack_float32 can run here: a CPU with a packed GEMM kernel (cpu/packed_linear.h) and
/// NMT_PACKED_GEMM unset or 1 (0: LibTorch's own linear layers, for comparisons). Throws an
/// nmt::Error naming any other value.
bool packing_available();

/// float32 weights packed for the GEMM kernel of this CPU (cpu/packed_linear.h), for float32
/// decoding without autocast: "float32 weights packed for the avx512 GEMM kernel (38 linear
/// layers)". Throws when !packing_available().
std::string pack_float32(Seq2Seq& model);

/// Removes every twin: the model computes with its own weights again.
void remove_twins(Seq2Seq& model);

/// For a model loaded only to decode (translate, evaluate, serve): empties the float weight and
/// bias of every linear layer that computes through its twin, which holds its own copy, and
/// returns the bytes freed (22 MB for the default shape). The untied output projection keeps
/// its weights, whose rows a lexical shortlist reads (DecoderImpl::output_rows). The model can
/// then no longer be saved, exported, trained or have its twins removed.
int64_t release_twinned_weights(Seq2Seq& model);

/// pack_float32 for as long as it lives, for a model that trains between decodings (validation
/// during training): packs when `wanted` and packing_available(), and removes the twins again
/// when it ends, so that no step trains through weights packed before it.
class PackedWhileDecoding {
 public:
  PackedWhileDecoding(Seq2Seq& model, bool wanted);
  ~PackedWhileDecoding();
  PackedWhileDecoding(const PackedWhileDecoding&) = delete;
  PackedWhileDecoding& operator=(const PackedWhileDecoding&) = delete;
  bool packed() const { return packed_; }

 private:
  Seq2Seq& model_;
  bool packed_ = false;
};

}  // namespace nmt
