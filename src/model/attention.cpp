#include "model/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include <torch/autograd.h>
#include <torch/version.h>

#include "core/error.h"
#include "core/precision.h"
#include "cpu/kernels.h"

namespace nmt {
namespace {

/// a·b over the batch dimensions through cpu::batched_matmul, with its gradients the same way:
/// ∂a = ∂c·bᵀ, ∂b = aᵀ·∂c, both transposed views (no copies).
struct BatchedMatmulFunction : public torch::autograd::Function<BatchedMatmulFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a,
                            const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return cpu::batched_matmul(a, b);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& a = saved[0];
    const at::Tensor& b = saved[1];
    at::Tensor grad = grads[0];
    if (!cpu::batched_matmul_takes(grad, b.transpose(-2, -1))) grad = grad.contiguous();
    return {ctx->needs_input_grad(0) ? product(grad, b.transpose(-2, -1)) : at::Tensor(),
            ctx->needs_input_grad(1) ? product(a.transpose(-2, -1), grad) : at::Tensor()};
  }
  static at::Tensor product(const at::Tensor& a, const at::Tensor& b) {
    return cpu::batched_matmul_takes(a, b) ? cpu::batched_matmul(a, b) : at::matmul(a, b);
  }
};

int64_t checked_head_dim(int64_t d_model, int64_t n_heads) {
  if (n_heads <= 0 || d_model <= 0 || d_model % n_heads != 0) {
    throw Error("MultiHeadAttention: d_model = " + std::to_string(d_model) +
                " must be a positive multiple of n_heads = " + std::to_string(n_heads));
  }
  return d_model / n_heads;
}

}  // namespace

at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b) {
  // Under bf16 autocast at::matmul computes in bf16: it keeps these products too.
  if (!autocast_enabled(/*cuda=*/false) && cpu::batched_matmul_takes(a, b)) {
    return BatchedMatmulFunction::apply(a, b);
  }
  return at::matmul(a, b);
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(int64_t d_model, int64_t n_heads, double dropout_p)
    : fc_q(register_module("fc_q", Linear(d_model, d_model))),
      fc_k(register_module("fc_k", Linear(d_model, d_model))),
      fc_v(register_module("fc_v", Linear(d_model, d_model))),
      fc_o(register_module("fc_o", Linear(d_model, d_model))),
      dropout(register_module("dropout", Dropout(dropout_p))),
      n_heads_(n_heads),
      head_dim_(checked_head_dim(d_model, n_heads)),
      dropout_p_(dropout_p) {}

at::Tensor MultiHeadAttentionImpl::split_heads(const at::Tensor& x) const {
  // [batch, len, d_model] -> [batch, len, heads, head_dim] -> [batch, heads, len, head_dim]
  return x.view({x.size(0), x.size(1), n_heads_, head_dim_}).transpose(1, 2);
}

KeyValue MultiHeadAttentionImpl::project(const at::Tensor& key, const at::Tensor& value) {
  return {split_heads(fc_k->forward(key)), split_heads(fc_v->forward(value))};
}

std::tuple<at::Tensor, at::Tensor> MultiHeadAttentionImpl::attend(const at::Tensor& query,
                                                                  const KeyValue& kv,
                                                                  const at::Tensor& mask,
                                                                  bool need_weights) {
  const int64_t batch = query.size(0);
  const int64_t q_len = query.size(1);
  const auto q = split_heads(fc_q->forward(query));  // [batch, heads, q_len, head_dim]
  at::Tensor context;                                // [batch, heads, q_len, head_dim]
  at::Tensor weights;                                // [batch, heads, q_len, k_len]
  if (!is_training() && cpu::attention_takes(q, kv.key, kv.value, mask)) {
    // Decoding and validation on the CPU: the computation below in one pass per row and head,
    // its output already [batch, q_len, d_model]. LibTorch 1.13's CPU bmm makes one GEMM call
    // per row and head; this took greedy decoding of test_2016 from 3.0 to 2.7 s
    // (docs/lab/performance.md).
    context =
        cpu::attention_inference(q, kv.key, kv.value, mask, 1.0 / std::sqrt(double(head_dim_)),
                                 need_weights ? &weights : nullptr);
    return {fc_o->forward(context), weights};
  }
#if TORCH_VERSION_MAJOR >= 2
  const double p = is_training() ? dropout_p_ : 0.0;
  // Same computation through LibTorch's fused kernel (flash / memory-efficient on CUDA). Not for
  // dropout on the CPU: the fused kernel draws its mask from the shared default generator, whose
  // draws data-parallel workers would interleave at random, while the path below takes each
  // worker's own seed stream (model/dropout.h), so a run and its resume stay bit-identical.
  if (!need_weights && (p == 0.0 || !q.device().is_cpu())) {
    const auto attn_mask = mask.defined() ? c10::optional<at::Tensor>(mask) : c10::nullopt;
    context = at::scaled_dot_product_attention(q, kv.key, kv.value, attn_mask, p);
  }
#endif
  if (!context.defined()) {
    // §3.2.1: scale by 1/sqrt(head_dim) so the softmax does not saturate as head_dim grows.
    auto scores = attention_matmul(q, kv.key.transpose(-2, -1)) / std::sqrt(double(head_dim_));
    if (mask.defined()) {
      // -inf gives masked keys exactly zero weight; every query keeps at least one key (bos).
      scores = at::where(mask, scores, -std::numeric_limits<float>::infinity());
    }
    weights = at::softmax(scores, -1);
    context = attention_matmul(dropout->forward(weights), kv.value);
    if (!need_weights) weights = at::Tensor();
  }
  // [batch, heads, q_len, head_dim] -> [batch, q_len, d_model]
  context = context.transpose(1, 2).reshape({batch, q_len, n_heads_ * head_dim_});
  return {fc_o->forward(context), weights};
}

std::tuple<at::Tensor, at::Tensor> MultiHeadAttentionImpl::forward(const at::Tensor& query,
                                                                   const at::Tensor& key,
                                                                   const at::Tensor& value,
                                                                   const at::Tensor& mask) {
  return attend(query, project(key, value), mask, /*need_weights=*/true);
}

}  // namespace nmt
