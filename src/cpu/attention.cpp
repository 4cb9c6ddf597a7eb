// Scaled dot-product attention for inference (cpu/kernels.h; the reference: model/attention.cpp).

#include <cmath>
#include <limits>
#include <vector>

#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include "cpu/kernels.h"
#include "cpu/vectorize.h"

namespace nmt::cpu {
namespace {

/// Element strides of a [B, H, len, D] operand (the last one is 1).
struct Strides {
  int64_t b, h, l;
  explicit Strides(const at::Tensor& t) : b(t.stride(0)), h(t.stride(1)), l(t.stride(2)) {}
};

/// Σ of the lanes by halving, which vectorises (a chain of 16 scalar adds per key cost more than
/// the products at head sizes of 64).
inline float lane_sum(float* lanes) {
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

/// q·k_j for the keys j0..j0+3 (rows `k_stride` apart), one pass over q.
inline void dot4(const float* q, const float* k, int64_t k_stride, int64_t dim, float* dots) {
  const float *k0 = k, *k1 = k + k_stride, *k2 = k + 2 * k_stride, *k3 = k + 3 * k_stride;
  float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= dim; d += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float x = q[d + l];
      a0[l] += x * k0[d + l], a1[l] += x * k1[d + l], a2[l] += x * k2[d + l],
          a3[l] += x * k3[d + l];
    }
  }
  dots[0] = lane_sum(a0), dots[1] = lane_sum(a1), dots[2] = lane_sum(a2), dots[3] = lane_sum(a3);
  for (; d < dim; ++d) {
    dots[0] += q[d] * k0[d], dots[1] += q[d] * k1[d], dots[2] += q[d] * k2[d],
        dots[3] += q[d] * k3[d];
  }
}

inline float dot1(const float* q, const float* k, int64_t dim) {
  float lanes[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= dim; d += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += q[d + l] * k[d + l];
  }
  float dot = lane_sum(lanes);
  for (; d < dim; ++d) dot += q[d] * k[d];
  return dot;
}

/// One head of one batch row: its operands' first elements and the strides between their rows.
struct Head {
  const float *q, *k, *v;
  int64_t q_stride, k_stride, v_stride;
  const bool* mask;  ///< null: no mask
  int64_t mask_q_stride, mask_l_stride;
  int64_t queries, keys, dim;
  float scale;
  float* probs;    ///< [queries, keys]
  float* context;  ///< rows context_stride apart
  int64_t context_stride;
};

/// For each of the head's queries: scores against its keys, the masked softmax (into probs),
/// and the weighted sum of the values into its context row. Keys and values go four at a time,
/// so that the query and the context row are read and written once per four keys.
NMT_VECTOR_CLONES
void attend_head(const Head& head) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const float *q = head.q, *k = head.k, *v = head.v;
  const int64_t q_stride = head.q_stride, k_stride = head.k_stride, v_stride = head.v_stride;
  const bool* mask = head.mask;
  const int64_t mask_q_stride = head.mask_q_stride, mask_l_stride = head.mask_l_stride;
  const int64_t queries = head.queries, keys = head.keys, dim = head.dim;
  const float scale = head.scale;
  float *probs = head.probs, *context = head.context;
  const int64_t context_stride = head.context_stride;
  for (int64_t i = 0; i < queries; ++i) {
    const float* qi = q + i * q_stride;
    float* p = probs + i * keys;
    int64_t j = 0;
    for (; j + 4 <= keys; j += 4) dot4(qi, k + j * k_stride, k_stride, dim, p + j);
    for (; j < keys; ++j) p[j] = dot1(qi, k + j * k_stride, dim);
    float max = kNegInf;
    for (j = 0; j < keys; ++j) {
      const bool keep = mask == nullptr || mask[i * mask_q_stride + j * mask_l_stride];
      p[j] = keep ? p[j] * scale : kNegInf;
      max = p[j] > max ? p[j] : max;
    }
    float* out = context + i * context_stride;
    for (int64_t d = 0; d < dim; ++d) out[d] = 0.0f;
    if (max == kNegInf) {  // every key masked: no weights, a zero context (never in nmt's masks)
      for (j = 0; j < keys; ++j) p[j] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (j = 0; j < keys; ++j) {
      p[j] = p[j] == kNegInf ? 0.0f : std::exp(p[j] - max);
      sum += p[j];
    }
    const float inverse = 1.0f / sum;
    for (j = 0; j < keys; ++j) p[j] *= inverse;
    for (j = 0; j + 4 <= keys; j += 4) {
      const float* v0 = v + j * v_stride;
      const float *v1 = v0 + v_stride, *v2 = v1 + v_stride, *v3 = v2 + v_stride;
      const float p0 = p[j], p1 = p[j + 1], p2 = p[j + 2], p3 = p[j + 3];
      for (int64_t d = 0; d < dim; ++d) out[d] += p0 * v0[d] + p1 * v1[d] + p2 * v2[d] + p3 * v3[d];
    }
    for (; j < keys; ++j) {
      const float* vj = v + j * v_stride;
      for (int64_t d = 0; d < dim; ++d) out[d] += p[j] * vj[d];
    }
  }
}

}  // namespace

bool attention_takes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& mask) {
  const auto fits = [](const at::Tensor& t) {
    return t.dim() == 4 && t.device().is_cpu() && t.scalar_type() == at::kFloat && t.stride(3) == 1;
  };
  return !c10::GradMode::is_enabled() && fits(q) && fits(k) && fits(v) && k.sizes() == v.sizes() &&
         q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3) &&
         (!mask.defined() || (mask.scalar_type() == at::kBool && mask.device().is_cpu()));
}

at::Tensor attention_inference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& mask, double scale, at::Tensor* weights) {
  TORCH_CHECK(attention_takes(q, k, v, mask), "attention_inference: operands it does not take");
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), dim = q.size(3);
  const int64_t keys = k.size(2);
  auto context = at::empty({batch, queries, heads * dim}, q.options());
  at::Tensor probs =
      weights != nullptr ? at::empty({batch, heads, queries, keys}, q.options()) : at::Tensor();
  // The mask as [B, H, Q, L] strides (0 along the dimensions it broadcasts over).
  at::Tensor full_mask;
  if (mask.defined()) full_mask = mask.expand({batch, heads, queries, keys});
  const Strides qs(q), ks(k), vs(v);
  const float* q_data = q.data_ptr<float>();
  const float* k_data = k.data_ptr<float>();
  const float* v_data = v.data_ptr<float>();
  const bool* m_data = full_mask.defined() ? full_mask.data_ptr<bool>() : nullptr;
  float* c_data = context.data_ptr<float>();
  float* p_data = probs.defined() ? probs.data_ptr<float>() : nullptr;
  const auto f_scale = float(scale);
  at::parallel_for(0, batch * heads, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(p_data == nullptr ? size_t(queries * keys) : 0);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      const bool* m = nullptr;
      int64_t m_q = 0, m_l = 0;
      if (m_data != nullptr) {
        m = m_data + b * full_mask.stride(0) + h * full_mask.stride(1);
        m_q = full_mask.stride(2), m_l = full_mask.stride(3);
      }
      float* p = p_data != nullptr ? p_data + bh * queries * keys : scratch.data();
      attend_head({q_data + b * qs.b + h * qs.h, k_data + b * ks.b + h * ks.h,
                   v_data + b * vs.b + h * vs.h, qs.l, ks.l, vs.l, m, m_q, m_l, queries, keys, dim,
                   f_scale, p, c_data + (b * queries * heads + h) * dim, heads * dim});
    }
  });
  if (weights != nullptr) *weights = probs;
  return context;
}

}  // namespace nmt::cpu
