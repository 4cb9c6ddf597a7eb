#include "cpu/int8_linear.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "cpu/vectorize.h"

#if NMT_WITH_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace nmt::cpu {

Quantized quantize_int8_rows(const at::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == at::kFloat,
              "quantize_int8_rows: expected a float32 matrix, got ", weight.sizes());
  auto amax = weight.abs().amax({1});          // [rows]
  amax = amax.masked_fill(amax.eq(0), 127.0);  // an all-zero row gets scale 1
  // A true float32 division, as numpy's 127.0 / amax (Scalar / Tensor would multiply by a
  // rounded reciprocal, and could differ from CTranslate2's converter in the last bit).
  const auto scale = at::full_like(amax, 127.0) / amax;
  const auto values = at::round(weight * scale.unsqueeze(1)).to(at::kChar);
  return {values.contiguous(), scale.contiguous()};
}

at::Tensor dequantize_int8_rows(const Quantized& rows) {
  const auto inverse = at::full_like(rows.scale, 1.0) / rows.scale;  // CTranslate2's 1.f / scale
  return rows.values.to(at::kFloat) * inverse.unsqueeze(1);
}

NMT_VECTOR_CLONES
void quantize_rows(const float* x, int64_t rows, int64_t cols, int32_t qmax, int32_t zero_point,
                   uint8_t* out, float* scales) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float lanes[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= cols; c += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], std::fabs(row[c + l]));
    }
    float max_abs = 0.0f;
    for (int l = 0; l < kLanes; ++l) max_abs = std::max(max_abs, lanes[l]);
    for (; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
    const float scale = max_abs > 0.0f ? float(qmax) / max_abs : 1.0f;
    const float limit = float(qmax);
    uint8_t* q = out + r * cols;
    for (c = 0; c < cols; ++c) {
      // Half to even, as CTranslate2; clamped (x·a can exceed qmax by a rounding error).
      const float v = std::min(limit, std::max(-limit, row[c] * scale));
      q[c] = uint8_t(int32_t(std::nearbyint(v)) + zero_point);
    }
    scales[r] = 1.0f / scale;
  }
}

NMT_VECTOR_CLONES
void dequantize_rows(const int32_t* sums, int64_t rows, int64_t cols, const float* row_scales,
                     const float* col_scales, const float* bias, float* y,
                     const int32_t* col_offsets) {
  for (int64_t r = 0; r < rows; ++r) {
    const float s = row_scales[r];
    const int32_t* in = sums + r * cols;
    float* out = y + r * cols;
    if (col_offsets != nullptr && bias != nullptr) {
      for (int64_t c = 0; c < cols; ++c) {
        out[c] = float(in[c] - col_offsets[c]) * s * col_scales[c] + bias[c];
      }
    } else if (col_offsets != nullptr) {
      for (int64_t c = 0; c < cols; ++c) out[c] = float(in[c] - col_offsets[c]) * s * col_scales[c];
    } else if (bias != nullptr) {
      for (int64_t c = 0; c < cols; ++c) out[c] = float(in[c]) * s * col_scales[c] + bias[c];
    } else {
      for (int64_t c = 0; c < cols; ++c) out[c] = float(in[c]) * s * col_scales[c];
    }
  }
}

#if NMT_WITH_DNNL

namespace {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Whether oneDNN's int8 kernels on this CPU sum byte products without int16 saturation.
bool has_vnni() {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return (isa & 0x40u) != 0 || (isa & 0x400u) != 0;  // avx512_core_vnni (and up), avx2_vnni
}

const char* isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "an older ISA";
  }
}

}  // namespace

bool int8_available() { return true; }

std::string int8_describe() {
  return std::string("oneDNN int8 on ") + isa_name() +
         (has_vnni() ? ", 8-bit activations" : ", 7-bit activations (no VNNI)");
}

struct Int8Linear::Impl {
  int64_t in = 0, out = 0;
  int32_t qmax = 127, zero_point = 128;
  std::vector<float> col_scales;     ///< [out]
  std::vector<float> bias;           ///< [out], or empty
  std::vector<int32_t> col_offsets;  ///< [out]: zero_point · Σ_k q[out, k], the activations' shift
  dnnl::matmul matmul;               ///< for any number of rows
  dnnl::memory weights;              ///< int8, in the layout the matmul wants
};

Int8Linear::Int8Linear(const at::Tensor& weight, const at::Tensor& bias, int activation_bits)
    : impl_(new Impl) {
  auto& m = *impl_;
  const at::Tensor w = weight.detach().to(at::kCPU, at::kFloat).contiguous();  // [out, in]
  m.out = w.size(0);
  m.in = w.size(1);
  if (activation_bits == 0) activation_bits = has_vnni() ? 8 : 7;
  if (activation_bits != 7 && activation_bits != 8) {
    throw std::invalid_argument("Int8Linear: activation_bits must be 7 or 8");
  }
  if (activation_bits == 7) m.qmax = 63, m.zero_point = 64;
  // Symmetric per output row, the integers CTranslate2 would hold (a tied projection re-quantizes
  // the rounded embedding table: the same integers, its scales equal to the last bit or so).
  const Quantized rows = quantize_int8_rows(w);
  const int8_t* q = rows.values.data_ptr<int8_t>();
  const at::Tensor inverse = at::full_like(rows.scale, 1.0) / rows.scale;
  m.col_scales.assign(inverse.data_ptr<float>(), inverse.data_ptr<float>() + m.out);
  // The activations are bytes shifted by zero_point: Σ_k (x_k + zp) q_k − zp · Σ_k q_k, the
  // second term once here rather than a zero-point attribute that has oneDNN recompute it
  // from the weights at every call (and keeps it off its fastest kernels).
  m.col_offsets.assign(size_t(m.out), 0);
  for (int64_t o = 0; o < m.out; ++o) {
    int32_t sum = 0;
    for (int64_t i = 0; i < m.in; ++i) sum += q[size_t(o * m.in + i)];
    m.col_offsets[size_t(o)] = m.zero_point * sum;
  }
  if (bias.defined()) {
    const at::Tensor b = bias.detach().to(at::kCPU, at::kFloat).contiguous();
    m.bias.assign(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
  }
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc src({DNNL_RUNTIME_DIM_VAL, m.in}, dt::u8, tag::ab);
  const dnnl::memory::desc weights_any({m.in, m.out}, dt::s8, tag::any);
  const dnnl::memory::desc dst({DNNL_RUNTIME_DIM_VAL, m.out}, dt::s32, tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights_any, dst), cpu_engine());
  m.matmul = dnnl::matmul(pd);
  // The [out, in] rows as the matmul's [in, out] operand: format "ba", then its own layout.
  dnnl::memory plain({{m.in, m.out}, dt::s8, tag::ba}, cpu_engine(), const_cast<int8_t*>(q));
  m.weights = dnnl::memory(pd.weights_desc(), cpu_engine());
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(plain, m.weights).execute(stream, plain, m.weights);
  stream.wait();
}

at::Tensor Int8Linear::forward(const at::Tensor& x) const {
  const auto& m = *impl_;
  if (x.size(-1) != m.in) {
    throw std::invalid_argument("Int8Linear: input has " + std::to_string(x.size(-1)) +
                                " features, the layer takes " + std::to_string(m.in));
  }
  const at::Tensor input = x.to(at::kFloat).contiguous();
  const int64_t rows = input.numel() / m.in;
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = m.out;
  at::Tensor y = at::empty(shape, input.options());
  if (rows == 0) return y;
  at::Tensor bytes = at::empty({rows, m.in}, input.options().dtype(at::kByte));
  at::Tensor sums = at::empty({rows, m.out}, input.options().dtype(at::kInt));
  std::vector<float> row_scales(static_cast<size_t>(rows));
  quantize_rows(input.data_ptr<float>(), rows, m.in, m.qmax, m.zero_point,
                bytes.data_ptr<uint8_t>(), row_scales.data());
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const auto& engine = cpu_engine();
  dnnl::memory src({{rows, m.in}, dt::u8, tag::ab}, engine, bytes.data_ptr());
  dnnl::memory dst({{rows, m.out}, dt::s32, tag::ab}, engine, sums.data_ptr());
  dnnl::stream stream(engine);
  m.matmul.execute(stream,
                   {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, m.weights}, {DNNL_ARG_DST, dst}});
  stream.wait();
  dequantize_rows(sums.data_ptr<int32_t>(), rows, m.out, row_scales.data(), m.col_scales.data(),
                  m.bias.empty() ? nullptr : m.bias.data(), y.data_ptr<float>(),
                  m.col_offsets.data());
  return y;
}

#else  // !NMT_WITH_DNNL

struct Int8Linear::Impl {
  int64_t in = 0, out = 0;
};

bool int8_available() { return false; }

std::string int8_describe() { return "none (built without oneDNN)"; }

Int8Linear::Int8Linear(const at::Tensor&, const at::Tensor&, int) {
  throw std::runtime_error(
      "int8 decoding needs oneDNN: apt-get install libdnnl-dev, then rebuild nmt");
}

at::Tensor Int8Linear::forward(const at::Tensor&) const { return {}; }

#endif

Int8Linear::~Int8Linear() = default;
int64_t Int8Linear::in_features() const { return impl_->in; }
int64_t Int8Linear::out_features() const { return impl_->out; }
int Int8Linear::activation_bits() const { return impl_->zero_point == 64 ? 7 : 8; }

std::shared_ptr<const InferenceLinear> Int8Linear::like(const at::Tensor& weight,
                                                        const at::Tensor& bias) const {
  return std::make_shared<const Int8Linear>(weight, bias, activation_bits());
}

}  // namespace nmt::cpu
