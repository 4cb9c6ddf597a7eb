#pragma once

// int8 linear layers for CPU decoding (decode.quantization = int8), on oneDNN's int8 matmul.
//
// Weights are quantized once, symmetrically per output row (quantize_int8_rows, the function
// nmt's CTranslate2 export writes its int8 weights with); activations per input row at each
// call (dynamic quantization, as CTranslate2 and PyTorch's dynamic quantization do), as unsigned
// bytes around a zero point, rounded as CTranslate2 rounds them. oneDNN multiplies them into
// int32 sums, and one pass turns those into float32: sum · (1 / row scale) · (1 / weight scale)
// + bias. So with 8-bit activations (VNNI) nmt's int8 decoding and CTranslate2 on nmt's export
// multiply the same integers.
//
// Without VNNI (AVX2-only and older AVX-512 CPUs) the byte products are summed in pairs into
// int16 (vpmaddubsw), which can saturate: there activations take 7 bits (±63 around 64), so two
// products never exceed 2·127·127 < 2^15. With VNNI they take 8 bits (±127 around 128).

#include <cstdint>
#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "cpu/inference_linear.h"

namespace nmt::cpu {

/// A quantized matrix: integer values and float32 scale(s), values ≈ weight·scale.
struct Quantized {
  at::Tensor values;
  at::Tensor scale;
};

/// int8 with one scale per row (output unit), as CTranslate2 stores weights and embedding
/// tables: scale = 127 / max|row| (1 for an all-zero row), values =
/// round-half-even(weight·scale). weight: float32 [rows, cols] -> int8 [rows, cols], scale
/// [rows]. Needs no oneDNN.
Quantized quantize_int8_rows(const at::Tensor& weight);

/// weight as CTranslate2 looks up an int8 embedding table: values · (1 / scale), float32.
at::Tensor dequantize_int8_rows(const Quantized& rows);

/// Whether this build has int8 matmuls (built with oneDNN: Debian's libdnnl-dev).
bool int8_available();

/// The ISA oneDNN runs its int8 kernels with on this CPU, and the activation range it implies:
/// "avx512_core_vnni, 8-bit activations" (for logs and benchmarks).
std::string int8_describe();

/// One linear layer y = x·Wᵀ + b with int8 weights. Immutable after construction: forward may
/// run on several threads at once.
class Int8Linear : public InferenceLinear {
 public:
  /// weight [out, in] and bias [out] (or undefined), any floating dtype, on the CPU.
  /// `activation_bits`: 8 or 7 (0: 8 with VNNI, else 7; 8 without VNNI can saturate). Throws
  /// std::runtime_error when !int8_available().
  Int8Linear(const at::Tensor& weight, const at::Tensor& bias, int activation_bits = 0);
  ~Int8Linear() override;
  Int8Linear(const Int8Linear&) = delete;
  Int8Linear& operator=(const Int8Linear&) = delete;

  /// x [..., in] (float32 or bfloat16, CPU) -> y [..., out] float32.
  at::Tensor forward(const at::Tensor& x) const override;
  std::shared_ptr<const InferenceLinear> like(const at::Tensor& weight,
                                              const at::Tensor& bias) const override;

  int64_t in_features() const;
  int64_t out_features() const;
  int activation_bits() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The two loops around the int8 product, exposed for tests (tests/test_int8.cpp):

/// Quantizes each row of x [rows, cols] to bytes as CTranslate2 does: q = round-half-even(x · a)
/// + zero_point with a = qmax / max|x_row| (1 for an all-zero row), written to `out` [rows,
/// cols]; `scales` gets 1 / a, what dequantize_rows multiplies by.
void quantize_rows(const float* x, int64_t rows, int64_t cols, int32_t qmax, int32_t zero_point,
                   uint8_t* out, float* scales);

/// y[r, c] = (sums[r, c] − col_offsets[c]) · row_scales[r] · col_scales[c] + bias[c] (bias and
/// col_offsets may be null).
void dequantize_rows(const int32_t* sums, int64_t rows, int64_t cols, const float* row_scales,
                     const float* col_scales, const float* bias, float* y,
                     const int32_t* col_offsets = nullptr);

}  // namespace nmt::cpu
