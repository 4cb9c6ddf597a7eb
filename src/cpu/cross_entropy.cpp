// Row kernels of the label-smoothed cross-entropy and R-Drop's symmetric KL (cpu/kernels.h).
// The composite versions (log_softmax, gather, mean, their backwards, the fp32 copy of bf16
// logits) make about ten passes over the [tokens, vocab] logits; these read each row twice
// forward (stats, then Σexp) and once backward.

#include <cmath>
#include <type_traits>
#include <vector>

#include <ATen/Parallel.h>

#include "cpu/kernels.h"
#include "cpu/vectorize.h"

namespace nmt::cpu {
namespace {

/// max and sum of a row.
NMT_VECTOR_CLONES void row_max_sum(const float* x, int64_t n, float* max_out, float* sum_out) {
  float max[kLanes], sum[kLanes];
  for (int j = 0; j < kLanes; ++j) max[j] = -INFINITY, sum[j] = 0.0f;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float v = x[i + j];
      max[j] = v > max[j] ? v : max[j];
      sum[j] += v;
    }
  }
  for (; i < n; ++i) max[0] = x[i] > max[0] ? x[i] : max[0], sum[0] += x[i];
  float m = max[0], s = 0.0f;
  for (int j = 0; j < kLanes; ++j) m = max[j] > m ? max[j] : m, s += sum[j];
  *max_out = m;
  *sum_out = s;
}

/// Σ exp(x - shift).
NMT_VECTOR_CLONES float row_sum_exp(const float* x, int64_t n, float shift) {
  float sum[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) sum[j] += exp_nonpositive(x[i + j] - shift);
  }
  for (; i < n; ++i) sum[0] += exp_nonpositive(x[i] - shift);
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += sum[j];
  return s;
}

/// out = scale·exp(x - lse) - offset (in place allowed).
NMT_VECTOR_CLONES void row_gradient(const float* x, int64_t n, float lse, float scale, float offset,
                                    float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = scale * exp_nonpositive(x[i] - lse) - offset;
}

/// KL(p‖q) = Σ p(a - b) and KL(q‖p) = Σ q(b - a) of one row pair (a = x - lse_x = log p).
NMT_VECTOR_CLONES void row_pair_kl(const float* x, const float* y, int64_t n, float lse_x,
                                   float lse_y, float* kl_pq, float* kl_qp) {
  float pq[kLanes] = {}, qp[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float a = x[i + j] - lse_x, b = y[i + j] - lse_y;
      pq[j] += exp_nonpositive(a) * (a - b);
      qp[j] += exp_nonpositive(b) * (b - a);
    }
  }
  for (; i < n; ++i) {
    const float a = x[i] - lse_x, b = y[i] - lse_y;
    pq[0] += exp_nonpositive(a) * (a - b);
    qp[0] += exp_nonpositive(b) * (b - a);
  }
  float s = 0.0f, t = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += pq[j], t += qp[j];
  *kl_pq = s;
  *kl_qp = t;
}

/// The two rows' gradients times g (kernels.h's formula).
NMT_VECTOR_CLONES void row_pair_kl_gradient(const float* x, const float* y, int64_t n, float lse_x,
                                            float lse_y, float kl_pq, float kl_qp, float g,
                                            float* grad_x, float* grad_y) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = x[i] - lse_x, b = y[i] - lse_y;
    const float p = exp_nonpositive(a), q = exp_nonpositive(b);
    grad_x[i] = g * (p * (a - b - kl_pq) + p - q);
    grad_y[i] = g * (q * (b - a - kl_qp) + q - p);
  }
}

float row_log_sum_exp(const float* x, int64_t n) {
  float max = 0.0f, sum = 0.0f;
  row_max_sum(x, n, &max, &sum);
  return max + std::log(row_sum_exp(x, n, max));
}

/// Row `r` of `data` as fp32: a pointer into the tensor (fp32) or into `buffer` (bf16).
template <class T>
const float* row_as_float(const T* data, int64_t r, int64_t n, float* buffer) {
  if constexpr (std::is_same_v<T, float>) {
    return data + r * n;
  } else {
    const auto* raw = reinterpret_cast<const uint16_t*>(data + r * n);
    for (int64_t i = 0; i < n; ++i) buffer[i] = bf16_to_float(raw[i]);
    return buffer;
  }
}

/// Writes a fp32 row as T.
template <class T>
void store_row(const float* row, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (row != out) std::memcpy(out, row, sizeof(float) * size_t(n));
  } else {
    auto* raw = reinterpret_cast<uint16_t*>(out);
    for (int64_t i = 0; i < n; ++i) raw[i] = float_to_bf16(row[i]);
  }
}

/// Calls f.template operator()<T>() with T the logits' element type (float or BFloat16).
template <class F>
auto dispatch(const at::Tensor& logits, F&& f) {
  TORCH_CHECK(takes(logits), "cpu kernels take float32 or bfloat16 CPU tensors, got ",
              logits.scalar_type(), " on ", logits.device());
  if (logits.scalar_type() == at::kFloat) return f(float{});
  return f(at::BFloat16{});
}

template <class T>
CrossEntropyRows cross_entropy_rows_of(const at::Tensor& logits, const at::Tensor& targets) {
  const int64_t rows = logits.size(0), n = logits.size(1);
  const auto options = logits.options().dtype(at::kFloat);
  CrossEntropyRows out{at::empty({rows}, options), at::empty({rows}, options),
                       at::empty({rows}, options)};
  const T* data = logits.data_ptr<T>();
  const int64_t* target = targets.data_ptr<int64_t>();
  float *lse_out = out.log_z.data_ptr<float>(), *nll_out = out.nll.data_ptr<float>();
  float* mean_out = out.mean_nll.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(std::is_same_v<T, float> ? 0 : size_t(n));
    for (int64_t r = begin; r < end; ++r) {
      const float* x = row_as_float(data, r, n, buffer.data());
      float max = 0.0f, sum = 0.0f;
      row_max_sum(x, n, &max, &sum);
      const float log_z = max + std::log(row_sum_exp(x, n, max));
      lse_out[r] = log_z;
      nll_out[r] = log_z - x[target[r]];
      mean_out[r] = log_z - sum / float(n);
    }
  });
  return out;
}

template <class T>
at::Tensor cross_entropy_gradient_of(const at::Tensor& logits, const at::Tensor& targets,
                                     const at::Tensor& lse, double epsilon, float g) {
  auto grad = at::empty_like(logits);
  const int64_t rows = logits.size(0), n = logits.size(1);
  const T* data = logits.data_ptr<T>();
  T* out = grad.data_ptr<T>();
  const int64_t* target = targets.data_ptr<int64_t>();
  const float* log_z = lse.data_ptr<float>();
  const float offset = g * float(epsilon) / float(n), hit = g * float(1.0 - epsilon);
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(static_cast<size_t>(n)), result(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const float* x = row_as_float(data, r, n, buffer.data());
      float* row = std::is_same_v<T, float> ? reinterpret_cast<float*>(out + r * n) : result.data();
      row_gradient(x, n, log_z[r], g, offset, row);
      row[target[r]] -= hit;
      store_row(row, n, out + r * n);
    }
  });
  return grad;
}

template <class T>
SymmetricKlRows symmetric_kl_rows_of(const at::Tensor& logits) {
  const int64_t pairs = logits.size(0) / 2, n = logits.size(1);
  const auto options = logits.options().dtype(at::kFloat);
  SymmetricKlRows out{at::empty({logits.size(0)}, options), at::empty({pairs, 2}, options)};
  const T* data = logits.data_ptr<T>();
  float *lse_out = out.log_z.data_ptr<float>(), *kl_out = out.kl.data_ptr<float>();
  at::parallel_for(0, pairs, 16, [&](int64_t begin, int64_t end) {
    const size_t size = std::is_same_v<T, float> ? 0 : size_t(n);
    std::vector<float> buffer_x(size), buffer_y(size);
    for (int64_t r = begin; r < end; ++r) {
      const float* x = row_as_float(data, r, n, buffer_x.data());
      const float* y = row_as_float(data, r + pairs, n, buffer_y.data());
      lse_out[r] = row_log_sum_exp(x, n);
      lse_out[r + pairs] = row_log_sum_exp(y, n);
      row_pair_kl(x, y, n, lse_out[r], lse_out[r + pairs], kl_out + 2 * r, kl_out + 2 * r + 1);
    }
  });
  return out;
}

template <class T>
at::Tensor symmetric_kl_gradient_of(const at::Tensor& logits, const SymmetricKlRows& stats,
                                    float g) {
  auto grad = at::empty_like(logits);
  const int64_t pairs = logits.size(0) / 2, n = logits.size(1);
  const T* data = logits.data_ptr<T>();
  T* out = grad.data_ptr<T>();
  const float *log_z = stats.log_z.data_ptr<float>(), *kls = stats.kl.data_ptr<float>();
  at::parallel_for(0, pairs, 16, [&](int64_t begin, int64_t end) {
    const auto size = static_cast<size_t>(n);
    std::vector<float> buffer_x(size), buffer_y(size), result_x(size), result_y(size);
    for (int64_t r = begin; r < end; ++r) {
      const float* x = row_as_float(data, r, n, buffer_x.data());
      const float* y = row_as_float(data, r + pairs, n, buffer_y.data());
      const bool in_place = std::is_same_v<T, float>;
      float* gx = in_place ? reinterpret_cast<float*>(out + r * n) : result_x.data();
      float* gy = in_place ? reinterpret_cast<float*>(out + (r + pairs) * n) : result_y.data();
      row_pair_kl_gradient(x, y, n, log_z[r], log_z[r + pairs], kls[2 * r], kls[2 * r + 1], g, gx,
                           gy);
      store_row(gx, n, out + r * n);
      store_row(gy, n, out + (r + pairs) * n);
    }
  });
  return grad;
}

}  // namespace

bool takes(const at::Tensor& logits) {
  return logits.device().is_cpu() &&
         (logits.scalar_type() == at::kFloat || logits.scalar_type() == at::kBFloat16);
}

CrossEntropyRows cross_entropy_rows(const at::Tensor& logits, const at::Tensor& targets) {
  TORCH_CHECK(logits.is_contiguous() && targets.is_contiguous(), "contiguous inputs expected");
  TORCH_CHECK(targets.min().item<int64_t>() >= 0 && targets.max().item<int64_t>() < logits.size(1),
              "targets must be in [0, ", logits.size(1), ")");
  return dispatch(logits,
                  [&](auto t) { return cross_entropy_rows_of<decltype(t)>(logits, targets); });
}

at::Tensor cross_entropy_gradient(const at::Tensor& logits, const at::Tensor& targets,
                                  const at::Tensor& log_z, double epsilon, float scale) {
  return dispatch(logits, [&](auto t) {
    return cross_entropy_gradient_of<decltype(t)>(logits, targets, log_z, epsilon, scale);
  });
}

SymmetricKlRows symmetric_kl_rows(const at::Tensor& logits) {
  TORCH_CHECK(logits.is_contiguous() && logits.size(0) % 2 == 0, "contiguous [2n, V] expected");
  return dispatch(logits, [&](auto t) { return symmetric_kl_rows_of<decltype(t)>(logits); });
}

at::Tensor symmetric_kl_gradient(const at::Tensor& logits, const SymmetricKlRows& rows,
                                 float scale) {
  return dispatch(
      logits, [&](auto t) { return symmetric_kl_gradient_of<decltype(t)>(logits, rows, scale); });
}

}  // namespace nmt::cpu
