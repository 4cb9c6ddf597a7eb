#pragma once

#include <string>

#include "model/seq2seq.h"

namespace nmt {

/// Gives every linear layer of `model` int8 weights for decoding (decode.quantization = int8):
/// the attention and feed-forward projections and the output projection, tied or not
/// (cpu/int8_linear.h). The float weights stay (checkpoints, export and teacher forcing read
/// them). For CPU decoding only; throws an nmt::Error when the build has no int8 backend or the
/// model is not on the CPU. Returns what it did, for the log: "int8 weights for 38 linear
/// layers (oneDNN int8 on avx512_core_bf16, 8-bit activations)".
std::string quantize_int8(Seq2Seq& model);

}  // namespace nmt
