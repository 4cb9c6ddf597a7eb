#pragma once

#include <ATen/ATen.h>

namespace nmt {

/// Summed losses over a set of target positions.
struct LossSums {
  at::Tensor loss;  ///< label-smoothed cross-entropy, summed (scalar, fp32, differentiable)
  at::Tensor nll;   ///< plain negative log-likelihood, summed (scalar, fp32, for perplexity)
};

/// Label-smoothed cross-entropy (Szegedy et al. 2016; Vaswani et al. 2017 §5.4): the target
/// distribution is (1 - ε)·one_hot + ε/V·uniform, so
///   loss = (1 - ε)·(-log p_y) + ε/V·Σ_v(-log p_v).
/// logits [n, vocab] (any float dtype; computed in fp32), targets [n] int64. Padding positions
/// must already be excluded (the trainer selects non-pad positions before the projection).
/// On CPU (fp32 or bf16 logits) a fused kernel computes the loss and its gradient in a few
/// passes over the logits; elsewhere this is label_smoothed_cross_entropy_reference.
LossSums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                      double epsilon);

/// The composite ATen version (log_softmax, gather, mean): any device; the fused kernel is
/// tested against it.
LossSums label_smoothed_cross_entropy_reference(const at::Tensor& logits, const at::Tensor& targets,
                                                double epsilon);

/// R-Drop's consistency term (Liang et al. 2021) over a batch stacked on itself: logits [2n, vocab]
/// whose row i and row n + i are one target position's two forward passes. Returns
///   Σ_i ½·(KL(p_i‖q_i) + KL(q_i‖p_i)) = Σ_i ½·Σ_v (p − q)(log p − log q),
/// p and q the softmax of rows i and n + i (computed in fp32), differentiable. On CPU (fp32 or
/// bf16 logits) a fused kernel reads each row pair three times forward and once backward;
/// elsewhere this is symmetric_kl_sum_reference.
at::Tensor symmetric_kl_sum(const at::Tensor& logits);

/// The composite ATen version (log_softmax, exp, ...): any device; the fused kernel is tested
/// against it.
at::Tensor symmetric_kl_sum_reference(const at::Tensor& logits);

}  // namespace nmt
