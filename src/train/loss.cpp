#include "train/loss.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/autograd.h>

namespace nmt {
namespace {

// ---- The fused CPU kernel ------------------------------------------------------------------
// The composite version (log_softmax, gather, mean, their backwards, the fp32 copy of bf16
// logits) makes about ten passes over the [tokens, vocab] logits and took about half of a small
// Transformer's training step here (profiled). The kernel below reads each row twice forward
// (stats, then Σexp from cache) and once backward, computing softmax - target directly.
// Hot loops keep 16 independent lanes so that GCC vectorises them without -ffast-math, and are
// cloned for AVX-512/AVX2 (picked at load time) with a portable default.

constexpr int kLanes = 16;

/// e^x for x <= 0 (clamped at -87): 2^n·2^f with n = round(x·log2 e), |f| <= 1/2, and a
/// degree-6 Taylor polynomial for 2^f; relative error about 2e-7. Branch-free, so it vectorises.
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float t = x * 1.44269504088896341f;
  const float rounded = (t + 12582912.0f) - 12582912.0f;  // round to nearest (1.5·2^23 trick)
  const float f = (t - rounded) * 0.69314718055994531f;   // in [-0.347, 0.347]
  float p = 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  int32_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits += int32_t(rounded) << 23;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NMT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NMT_CLONES
#endif

/// max and sum of a row.
NMT_CLONES void row_max_sum(const float* x, int64_t n, float* max_out, float* sum_out) {
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
NMT_CLONES float row_sum_exp(const float* x, int64_t n, float shift) {
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
NMT_CLONES void row_gradient(const float* x, int64_t n, float lse, float scale, float offset,
                             float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = scale * exp_nonpositive(x[i] - lse) - offset;
}

/// Reads row `r` of `logits` as fp32: a pointer into the tensor (fp32) or into `buffer` (bf16).
template <class T>
const float* row_as_float(const T* data, int64_t r, int64_t n, float* buffer) {
  if constexpr (std::is_same_v<T, float>) {
    return data + r * n;
  } else {
    const auto* raw = reinterpret_cast<const uint16_t*>(data + r * n);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = uint32_t(raw[i]) << 16;
      std::memcpy(buffer + i, &bits, sizeof bits);
    }
    return buffer;
  }
}

/// Writes a fp32 row as T (bf16: round to nearest even).
template <class T>
void store_row(const float* row, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (row != out) std::memcpy(out, row, sizeof(float) * size_t(n));
  } else {
    auto* raw = reinterpret_cast<uint16_t*>(out);
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, row + i, sizeof bits);
      raw[i] = uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
    }
  }
}

/// Per row: log-sum-exp, -log p_target and mean_v(-log p_v).
template <class T>
void forward_rows(const at::Tensor& logits, const at::Tensor& targets, at::Tensor& lse,
                  at::Tensor& nll, at::Tensor& smooth) {
  const int64_t rows = logits.size(0), n = logits.size(1);
  const T* data = logits.data_ptr<T>();
  const int64_t* target = targets.data_ptr<int64_t>();
  float *lse_out = lse.data_ptr<float>(), *nll_out = nll.data_ptr<float>();
  float* smooth_out = smooth.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(std::is_same_v<T, float> ? 0 : size_t(n));
    for (int64_t r = begin; r < end; ++r) {
      const float* x = row_as_float(data, r, n, buffer.data());
      float max = 0.0f, sum = 0.0f;
      row_max_sum(x, n, &max, &sum);
      const float log_z = max + std::log(row_sum_exp(x, n, max));
      lse_out[r] = log_z;
      nll_out[r] = log_z - x[target[r]];
      smooth_out[r] = log_z - sum / float(n);
    }
  });
}

/// grad = g·(softmax - (1-ε)·one_hot(target) - ε/V), written in the logits' dtype.
template <class T>
at::Tensor backward_rows(const at::Tensor& logits, const at::Tensor& targets, const at::Tensor& lse,
                         double epsilon, float g) {
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

/// Differentiable w.r.t. logits only; returns [loss_sum, nll_sum] (the second for perplexity).
/// Logits are float or bfloat16 (label_smoothed_cross_entropy routes anything else elsewhere).
struct FusedSmoothedCrossEntropy : public torch::autograd::Function<FusedSmoothedCrossEntropy> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in,
                            const at::Tensor& targets_in, double epsilon) {
    const auto logits = logits_in.contiguous();
    const auto targets = targets_in.contiguous();
    const int64_t rows = logits.size(0);
    TORCH_CHECK(
        targets.min().item<int64_t>() >= 0 && targets.max().item<int64_t>() < logits.size(1),
        "targets must be in [0, ", logits.size(1), ")");
    const auto options = logits.options().dtype(at::kFloat);
    auto lse = at::empty({rows}, options), nll = at::empty({rows}, options);
    auto smooth = at::empty({rows}, options);
    if (logits.scalar_type() == at::kFloat) {
      forward_rows<float>(logits, targets, lse, nll, smooth);
    } else {
      forward_rows<at::BFloat16>(logits, targets, lse, nll, smooth);
    }
    ctx->save_for_backward({logits, targets, lse});
    ctx->saved_data["epsilon"] = epsilon;
    const auto nll_sum = nll.sum();
    const auto loss_sum = (1.0 - epsilon) * nll_sum + epsilon * smooth.sum();
    return at::stack({loss_sum, nll_sum});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const double epsilon = ctx->saved_data["epsilon"].toDouble();
    // Only the loss (element 0) is trained on; the nll element is reported, never differentiated.
    const float g = grads[0][0].item<float>();
    const auto grad = saved[0].scalar_type() == at::kFloat
                          ? backward_rows<float>(saved[0], saved[1], saved[2], epsilon, g)
                          : backward_rows<at::BFloat16>(saved[0], saved[1], saved[2], epsilon, g);
    return {grad, at::Tensor(), at::Tensor()};
  }
};

// ---- R-Drop's symmetric KL, fused the same way ---------------------------------------------
// With a = x - lse_x = log p and b = y - lse_y = log q of a row pair, the term is
// ½·Σ (p - q)(a - b) = ½·(KL(p‖q) + KL(q‖p)), and its gradients are
//   ∂/∂x_k = ½·(p_k·(a_k - b_k - KL(p‖q)) + p_k - q_k),  ∂/∂y_k = ½·(q_k·(b_k - a_k - KL(q‖p)) + q_k - p_k).

/// KL(p‖q) = Σ p(a - b) and KL(q‖p) = Σ q(b - a) of one row pair.
NMT_CLONES void row_pair_kl(const float* x, const float* y, int64_t n, float lse_x, float lse_y,
                            float* kl_pq, float* kl_qp) {
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

/// The two rows' gradients times g (the formula above, with its ½ folded into g).
NMT_CLONES void row_pair_kl_gradient(const float* x, const float* y, int64_t n, float lse_x,
                                     float lse_y, float kl_pq, float kl_qp, float g, float* grad_x,
                                     float* grad_y) {
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

/// Per row: log-sum-exp; per pair: KL(p‖q), KL(q‖p).
template <class T>
void kl_forward_rows(const at::Tensor& logits, at::Tensor& lse, at::Tensor& kl) {
  const int64_t pairs = logits.size(0) / 2, n = logits.size(1);
  const T* data = logits.data_ptr<T>();
  float *lse_out = lse.data_ptr<float>(), *kl_out = kl.data_ptr<float>();
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
}

template <class T>
at::Tensor kl_backward_rows(const at::Tensor& logits, const at::Tensor& lse, const at::Tensor& kl,
                            float g) {
  auto grad = at::empty_like(logits);
  const int64_t pairs = logits.size(0) / 2, n = logits.size(1);
  const T* data = logits.data_ptr<T>();
  T* out = grad.data_ptr<T>();
  const float *log_z = lse.data_ptr<float>(), *kls = kl.data_ptr<float>();
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

/// Differentiable w.r.t. the stacked logits; returns the summed symmetric KL (a scalar).
struct FusedSymmetricKl : public torch::autograd::Function<FusedSymmetricKl> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in) {
    const auto logits = logits_in.contiguous();
    const auto options = logits.options().dtype(at::kFloat);
    auto lse = at::empty({logits.size(0)}, options), kl = at::empty({logits.size(0) / 2, 2}, options);
    if (logits.scalar_type() == at::kFloat) {
      kl_forward_rows<float>(logits, lse, kl);
    } else {
      kl_forward_rows<at::BFloat16>(logits, lse, kl);
    }
    ctx->save_for_backward({logits, lse, kl});
    return 0.5 * kl.sum();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const float g = 0.5f * grads[0].item<float>();
    return {saved[0].scalar_type() == at::kFloat
                ? kl_backward_rows<float>(saved[0], saved[1], saved[2], g)
                : kl_backward_rows<at::BFloat16>(saved[0], saved[1], saved[2], g)};
  }
};

void check_pairs(const at::Tensor& logits) {
  TORCH_CHECK(logits.dim() == 2 && logits.size(0) % 2 == 0,
              "symmetric_kl_sum needs [2n, vocab] logits (two passes stacked), got ",
              logits.sizes());
}

void check_shapes(const at::Tensor& logits, const at::Tensor& targets) {
  TORCH_CHECK(logits.dim() == 2 && targets.dim() == 1 && logits.size(0) == targets.size(0),
              "logits must be [n, vocab] and targets [n], got ", logits.sizes(), " and ",
              targets.sizes());
}

}  // namespace

LossSums label_smoothed_cross_entropy_reference(const at::Tensor& logits, const at::Tensor& targets,
                                                double epsilon) {
  check_shapes(logits, targets);
  const auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);  // [n, vocab]
  const auto nll = -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1).sum();
  if (epsilon == 0.0) return {nll, nll.detach()};
  const auto uniform = -log_probs.mean(-1).sum();  // Σ_n (1/V) Σ_v -log p_v
  return {(1.0 - epsilon) * nll + epsilon * uniform, nll.detach()};
}

LossSums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                      double epsilon) {
  check_shapes(logits, targets);
  const bool fused = logits.device().is_cpu() &&
                     (logits.scalar_type() == at::kFloat || logits.scalar_type() == at::kBFloat16);
  if (!fused || logits.size(0) == 0) {
    return label_smoothed_cross_entropy_reference(logits, targets, epsilon);
  }
  const auto sums = FusedSmoothedCrossEntropy::apply(logits, targets, epsilon);
  return {sums[0], sums[1].detach()};
}

at::Tensor symmetric_kl_sum_reference(const at::Tensor& logits) {
  check_pairs(logits);
  const int64_t n = logits.size(0) / 2;
  const auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);
  const auto log_p = log_probs.narrow(0, 0, n), log_q = log_probs.narrow(0, n, n);
  return 0.5 * ((log_p.exp() - log_q.exp()) * (log_p - log_q)).sum();
}

at::Tensor symmetric_kl_sum(const at::Tensor& logits) {
  check_pairs(logits);
  const bool fused = logits.device().is_cpu() &&
                     (logits.scalar_type() == at::kFloat || logits.scalar_type() == at::kBFloat16);
  if (!fused || logits.size(0) == 0) return symmetric_kl_sum_reference(logits);
  return FusedSymmetricKl::apply(logits);
}

}  // namespace nmt
