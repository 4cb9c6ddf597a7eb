#include "cpu/packed_linear.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NMT_GEMM_KERNELS 1
#else
#define NMT_GEMM_KERNELS 0
#endif

namespace nmt::cpu {

namespace {

constexpr int64_t kPanel = 32;     // output columns per packed panel
constexpr int64_t kRowBlock = 96;  // rows whose inputs stay in L2 while the panels stream by

/// Multiplies `rows` rows of x (row stride ldx) by one panel of `k` × 32 packed weights into y
/// (row stride ldy), adding `bias` (32 values, or null), writing the first `cols` columns.
using TileKernel = void (*)(const float* x, int64_t ldx, const float* panel, int64_t k,
                            const float* bias, float* y, int64_t ldy, int cols);

#if NMT_GEMM_KERNELS

// The accumulators of a tile stay in registers for the whole of k: each step loads the panel's
// 32 weights of that k once and broadcasts each row's input to them. The sum runs in order of k
// and the bias comes last, as in OpenBLAS's kernel under LibTorch's addmm (which splits sums of
// a few hundred terms and more into blocks, so long rows can differ in the last bits). A row's
// result does not depend on the other rows, nor on the tile or thread that computes it.

template <int R>
__attribute__((target("avx512f"))) void tile_avx512(const float* x, int64_t ldx, const float* panel,
                                                    int64_t k, const float* bias, float* y,
                                                    int64_t ldy, int cols) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i) {
    const __m512 w_lo = _mm512_load_ps(panel + kPanel * i);
    const __m512 w_hi = _mm512_load_ps(panel + kPanel * i + 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(x[r * ldx + i]);
      lo[r] = _mm512_fmadd_ps(a, w_lo, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, w_hi, hi[r]);
    }
  }
  const __mmask16 mask_lo = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 mask_hi = cols >= 32  ? __mmask16(0xFFFF)
                            : cols > 16 ? __mmask16((1u << (cols - 16)) - 1)
                                        : __mmask16(0);
  if (bias != nullptr) {
    const __m512 b_lo = _mm512_load_ps(bias), b_hi = _mm512_load_ps(bias + 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      lo[r] = _mm512_add_ps(lo[r], b_lo);
      hi[r] = _mm512_add_ps(hi[r], b_hi);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, mask_lo, lo[r]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, mask_hi, hi[r]);
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void tile_avx2(const float* x, int64_t ldx, const float* panel,
                                                   int64_t k, const float* bias, float* y,
                                                   int64_t ldy, int cols) {
  __m256 acc[R][4];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < k; ++i) {
    __m256 a[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) a[r] = _mm256_broadcast_ss(x + r * ldx + i);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256 w = _mm256_load_ps(panel + kPanel * i + 8 * j);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][j] = _mm256_fmadd_ps(a[r], w, acc[r][j]);
    }
  }
  alignas(32) float out[8];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < 4; ++j) {
      __m256 v = acc[r][j];
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_load_ps(bias + 8 * j));
      const int first = 8 * j;
      if (first + 8 <= cols) {
        _mm256_storeu_ps(y + r * ldy + first, v);
      } else if (first < cols) {
        _mm256_store_ps(out, v);
        std::copy(out, out + (cols - first), y + r * ldy + first);
      }
    }
  }
}

// Tables of the kernels for 1 to N rows.
template <int... R>
std::array<TileKernel, sizeof...(R)> avx512_tiles(std::integer_sequence<int, R...>) {
  return {&tile_avx512<R + 1>...};
}
template <int... R>
std::array<TileKernel, sizeof...(R)> avx2_tiles(std::integer_sequence<int, R...>) {
  return {&tile_avx2<R + 1>...};
}

#endif  // NMT_GEMM_KERNELS

/// The ISA this process may use: the CPU's best, lowered by ATEN_CPU_CAPABILITY.
GemmIsa detect_isa() {
#if NMT_GEMM_KERNELS
  GemmIsa isa = GemmIsa::kNone;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = GemmIsa::kAvx2;
  if (isa == GemmIsa::kAvx2 && __builtin_cpu_supports("avx512f")) isa = GemmIsa::kAvx512;
  if (const char* capability = std::getenv("ATEN_CPU_CAPABILITY")) {
    const std::string value = capability;
    if (value == "default") isa = GemmIsa::kNone;
    if (value == "avx2") isa = std::min(isa, GemmIsa::kAvx2);
  }
  return isa;
#else
  return GemmIsa::kNone;
#endif
}

}  // namespace

GemmIsa gemm_isa() {
  static const GemmIsa isa = detect_isa();
  return isa;
}

std::string gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512:
      return "avx512";
    case GemmIsa::kAvx2:
      return "avx2";
    case GemmIsa::kNone:
      break;
  }
  return "none";
}

PackedLinear::PackedLinear(const at::Tensor& weight, const at::Tensor& bias, GemmIsa isa)
    : isa_(isa == GemmIsa::kNone ? gemm_isa() : isa) {
  if (gemm_isa() == GemmIsa::kNone) {
    throw std::runtime_error("this CPU has no packed float32 GEMM kernel (it needs AVX2 and FMA)");
  }
  if (isa_ > gemm_isa()) {
    throw std::runtime_error("this CPU cannot run the " + gemm_isa_name(isa_) + " GEMM kernel");
  }
  TORCH_CHECK(weight.dim() == 2 && weight.device().is_cpu(),
              "PackedLinear: expected a CPU weight matrix, got ", weight.sizes());
  out_ = weight.size(0);
  in_ = weight.size(1);
  const int64_t panels = (out_ + kPanel - 1) / kPanel;
  // [out, in] -> zero-padded [panels·32, in] -> [panels, 32, in] -> [panels, in, 32].
  const auto options = at::TensorOptions().dtype(at::kFloat);
  at::Tensor padded = at::zeros({panels * kPanel, in_}, options);
  padded.narrow(0, 0, out_).copy_(weight.detach());
  panels_ = padded.view({panels, kPanel, in_}).transpose(1, 2).contiguous();
  if (bias.defined()) {
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == out_, "PackedLinear: bias ", bias.sizes(),
                " for ", out_, " outputs");
    bias_ = at::zeros({panels * kPanel}, options);
    bias_.narrow(0, 0, out_).copy_(bias.detach());
  }
}

std::shared_ptr<const InferenceLinear> PackedLinear::like(const at::Tensor& weight,
                                                          const at::Tensor& bias) const {
  return std::make_shared<const PackedLinear>(weight, bias, isa_);
}

at::Tensor PackedLinear::forward(const at::Tensor& x) const {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.device().is_cpu() && x.size(-1) == in_,
              "PackedLinear: expected float32 CPU input [..., ", in_, "], got ", x.sizes());
  const at::Tensor rows_in = x.reshape({-1, in_}).contiguous();
  const int64_t rows = rows_in.size(0);
  at::Tensor y = at::empty({rows, out_}, x.options());
#if NMT_GEMM_KERNELS
  static const auto avx512 = avx512_tiles(std::make_integer_sequence<int, 12>{});
  static const auto avx2 = avx2_tiles(std::make_integer_sequence<int, 3>{});
  const TileKernel* table = isa_ == GemmIsa::kAvx512 ? avx512.data() : avx2.data();
  const int64_t tile_rows =
      isa_ == GemmIsa::kAvx512 ? int64_t(avx512.size()) : int64_t(avx2.size());
  const float* in = rows_in.data_ptr<float>();
  const float* packed = panels_.data_ptr<float>();
  const float* bias = bias_.defined() ? bias_.data_ptr<float>() : nullptr;
  float* out = y.data_ptr<float>();
  const int64_t panels = panels_.size(0);
  at::parallel_for(0, panels, 1, [&](int64_t first, int64_t last) {
    for (int64_t row0 = 0; row0 < rows; row0 += kRowBlock) {
      const int64_t row_end = std::min(rows, row0 + kRowBlock);
      for (int64_t p = first; p < last; ++p) {
        const int cols = int(std::min(kPanel, out_ - p * kPanel));
        const float* panel = packed + p * in_ * kPanel;
        const float* panel_bias = bias != nullptr ? bias + p * kPanel : nullptr;
        for (int64_t r = row0; r < row_end; r += tile_rows) {
          const int64_t n = std::min(tile_rows, row_end - r);
          table[n - 1](in + r * in_, in_, panel, in_, panel_bias, out + r * out_ + p * kPanel, out_,
                       cols);
        }
      }
    }
  });
#endif
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = out_;
  return y.view(sizes);
}

}  // namespace nmt::cpu
