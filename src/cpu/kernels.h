#pragma once

// Hand-written CPU kernels, behind one narrow interface.
//
// Each is the fast path of a formula whose readable reference stays with its caller:
//   label-smoothed cross-entropy and R-Drop's symmetric KL  -> train/loss.cpp
//   the hash dropout mask                                    -> model/dropout.cpp
//   the fused Adam(W) update                                 -> train/optimizer.cpp
//   attention for inference (decoding, validation)           -> model/attention.cpp
//   attention's batched products in training                 -> model/attention.cpp
//   beam search's top candidates                             -> decode/beam_search.cpp
// and tests/test_cpu_kernels.cpp compares each kernel with that reference. They exist because
// LibTorch's composite versions were profiled as a large share of a small Transformer's training
// step on a 2-core CPU (the loss about half, CPU bernoulli 13%, Adam's seven ops per parameter)
// or of its decoding (LibTorch 1.13's CPU bmm runs one GEMM call per batch row and head: the
// attention kernel took a tenth off greedy decoding, docs/lab/performance.md).
// The loops are plain C++ that GCC vectorises and clones for AVX-512/AVX2 (cpu/vectorize.h).

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace nmt::cpu {

/// Whether the row kernels below take `logits`: a CPU tensor of float32 or bfloat16.
bool takes(const at::Tensor& logits);

// ---- Label-smoothed cross-entropy ---------------------------------------------------------

/// Per-row statistics of logits x [rows, V] (fp32 or bf16) with targets y [rows] (int64 in
/// [0, V)), each [rows] fp32. Two passes over each row: max and Σx, then Σexp(x - max).
struct CrossEntropyRows {
  at::Tensor log_z;     ///< log Σ_v exp(x_v)
  at::Tensor nll;       ///< -log p_y = log_z - x_y
  at::Tensor mean_nll;  ///< (1/V)·Σ_v -log p_v = log_z - mean(x)
};
CrossEntropyRows cross_entropy_rows(const at::Tensor& logits, const at::Tensor& targets);

/// scale·(softmax(x) - (1-ε)·one_hot(y) - ε/V), the gradient of the label-smoothed loss, in the
/// logits' dtype; one pass over each row. `log_z` is cross_entropy_rows' output.
at::Tensor cross_entropy_gradient(const at::Tensor& logits, const at::Tensor& targets,
                                  const at::Tensor& log_z, double epsilon, float scale);

// ---- R-Drop's symmetric KL ----------------------------------------------------------------

/// Logits [2n, V] whose rows i and n + i are one position's two passes, p and q their softmax.
struct SymmetricKlRows {
  at::Tensor log_z;  ///< [2n] log Σ_v exp(x_v) of every row
  at::Tensor kl;     ///< [n, 2]: KL(p‖q) and KL(q‖p) of each pair
};
SymmetricKlRows symmetric_kl_rows(const at::Tensor& logits);

/// scale·(∂/∂x, ∂/∂y) of Σ_pairs (KL(p‖q) + KL(q‖p)): with a = log p, b = log q,
/// ∂/∂x_k = p_k·(a_k - b_k - KL(p‖q)) + p_k - q_k (and symmetrically for y), in the logits' dtype.
at::Tensor symmetric_kl_gradient(const at::Tensor& logits, const SymmetricKlRows& rows,
                                 float scale);

// ---- Dropout ------------------------------------------------------------------------------

/// Whether element `index` is kept by the mask of `seed` when it drops with probability p,
/// given as threshold = round(p·2^32): a counter-based hash of (seed, index) >= threshold.
bool hash_keeps(uint64_t index, uint64_t seed, uint32_t threshold);

/// x·keep/(1-p), keep from hash_keeps, for p in (0, 1): float32 and bfloat16 in one pass
/// (other dtypes through a float mask).
at::Tensor hash_dropout_apply(const at::Tensor& x, double p, uint64_t seed);

// ---- Adam(W) ------------------------------------------------------------------------------

/// One parameter's scalars, in the float arithmetic LibTorch's ops use on float32.
struct AdamScalars {
  float grad_scale = 1.0f;  ///< gradient multiplier (the clipping factor)
  float beta1 = 0.9f, beta2 = 0.999f;
  float l2 = 0.0f;     ///< Adam's L2 term (weight_decay without decoupling)
  float decay = 1.0f;  ///< AdamW's p *= 1 - lr·weight_decay
  float sqrt_bias_correction2 = 1.0f, eps = 1e-8f, step_size = 1e-3f;
};

/// In place over n elements, in LibTorch's order of operations (adam.cpp / adamw.cpp):
///   p = p·decay;  g = grad·grad_scale + l2·p;  m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²;
///   p = p - step_size·m / (√v / sqrt_bias_correction2 + ε).
/// Split over the intra-op threads.
void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamScalars& scalars);

// ---- Batched matrix products -------------------------------------------------------------
/// Whether batched_matmul takes a [..., M, K] and b [..., K, N]: float32 CPU tensors of at least
/// 3 and equal dimensions, the same batch sizes (no broadcasting), neither empty, and each with
/// a unit stride in one of its last two dimensions (a transposed view is fine); and a BLAS
/// whose sgemm this process can call.
bool batched_matmul_takes(const at::Tensor& a, const at::Tensor& b);
/// a·b per batch index, [..., M, N], one BLAS call per product read through the operands'
/// strides. LibTorch 1.13's CPU bmm also calls BLAS once per product, but through a select and
/// an as_strided per operand, after copying transposed views (at::matmul's reshape).
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b);

// ---- Attention for inference -------------------------------------------------------------

/// Whether attention_inference takes these operands: float32 CPU tensors of 4 dimensions whose
/// last stride is 1, q [B, H, Q, D] and k, v [B, H, L, D], an optional bool CPU mask, and no
/// gradient to record (c10::GradMode off).
bool attention_takes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& mask);

/// softmax(q·kᵀ·scale, where mask) · v, one pass per batch row and head (split over the intra-op
/// threads), with mask (true = attend) broadcastable to [B, H, Q, L] or undefined. Returns the
/// context with the heads concatenated, [B, Q, H·D] (what the output projection takes); with
/// `weights` non-null the softmax [B, H, Q, L] goes there. A query whose keys are all masked
/// gets zero weights and a zero context.
at::Tensor attention_inference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& mask, double scale, at::Tensor* weights);

// ---- Beam search's candidates ------------------------------------------------------------

struct TopK {
  at::Tensor values;  ///< [groups, k] float64 (float32 sums, widened)
  at::Tensor ids;     ///< [groups, k] int64: row within the group · V + column
};

/// For each group of `group` consecutive rows of x [rows, V] (float32, CPU): the k largest
/// float(live[row]) + x[row][v] over its rows and columns, best first, an equal value after the
/// lower id. One pass that skips chunks of a row whose maximum cannot enter, and no [rows, V]
/// sum: what beam search's (live + log_probs).view(groups, -1).topk(k) computes.
TopK top_k_grouped(const at::Tensor& x, const std::vector<double>& live, int64_t group, int64_t k);

}  // namespace nmt::cpu
