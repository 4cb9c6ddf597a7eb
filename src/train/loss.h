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
LossSums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                      double epsilon);

}  // namespace nmt
