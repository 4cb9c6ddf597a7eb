#include "train/loss.h"

#include <torch/autograd.h>

#include "cpu/kernels.h"

namespace nmt {
namespace {

// On the CPU the two losses below run on fused row kernels (cpu/kernels.h) that compute the
// same formulas as the *_reference functions in a few passes over the logits, and their
// gradients directly (softmax minus target) instead of through autograd's composite backward.

/// Label-smoothed cross-entropy on the CPU kernels: returns [loss_sum, nll_sum], differentiable
/// w.r.t. the logits (only the loss is trained on; the nll is reported for perplexity).
struct FusedSmoothedCrossEntropy : public torch::autograd::Function<FusedSmoothedCrossEntropy> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in,
                            const at::Tensor& targets_in, double epsilon) {
    const auto logits = logits_in.contiguous();
    const auto targets = targets_in.contiguous();
    const auto rows = cpu::cross_entropy_rows(logits, targets);
    ctx->save_for_backward({logits, targets, rows.log_z});
    ctx->saved_data["epsilon"] = epsilon;
    // loss = Σ (1 - ε)·(-log p_y) + ε·(1/V)·Σ_v(-log p_v)
    const auto nll_sum = rows.nll.sum();
    const auto loss_sum = (1.0 - epsilon) * nll_sum + epsilon * rows.mean_nll.sum();
    return at::stack({loss_sum, nll_sum});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const double epsilon = ctx->saved_data["epsilon"].toDouble();
    // ∂loss/∂x = softmax(x) - (1 - ε)·one_hot(y) - ε/V
    const float g = grads[0][0].item<float>();
    return {cpu::cross_entropy_gradient(saved[0], saved[1], saved[2], epsilon, g), at::Tensor(),
            at::Tensor()};
  }
};

/// R-Drop's summed symmetric KL on the CPU kernels, differentiable w.r.t. the stacked logits.
struct FusedSymmetricKl : public torch::autograd::Function<FusedSymmetricKl> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in) {
    const auto logits = logits_in.contiguous();
    const auto rows = cpu::symmetric_kl_rows(logits);
    ctx->save_for_backward({logits, rows.log_z, rows.kl});
    return 0.5 * rows.kl.sum();  // Σ_i ½·(KL(p_i‖q_i) + KL(q_i‖p_i))
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const float g = 0.5f * grads[0].item<float>();
    return {cpu::symmetric_kl_gradient(saved[0], {saved[1], saved[2]}, g)};
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
  if (!cpu::takes(logits) || logits.size(0) == 0) {
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
  if (!cpu::takes(logits) || logits.size(0) == 0) return symmetric_kl_sum_reference(logits);
  return FusedSymmetricKl::apply(logits);
}

}  // namespace nmt
