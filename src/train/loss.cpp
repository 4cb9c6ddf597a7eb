#include "train/loss.h"

namespace nmt {

LossSums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                      double epsilon) {
  TORCH_CHECK(logits.dim() == 2 && targets.dim() == 1 && logits.size(0) == targets.size(0),
              "logits must be [n, vocab] and targets [n], got ", logits.sizes(), " and ",
              targets.sizes());
  const auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);  // [n, vocab]
  const auto nll = -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1).sum();
  if (epsilon == 0.0) return {nll, nll.detach()};
  const auto uniform = -log_probs.mean(-1).sum();  // Σ_n (1/V) Σ_v -log p_v
  return {(1.0 - epsilon) * nll + epsilon * uniform, nll.detach()};
}

}  // namespace nmt
