#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace nmt {

/// An exponential moving average of the weights (train.ema_decay), kept beside the model and
/// updated after every optimizer step: ema ← d·ema + (1 − d)·w, with the usual warm-up
/// d = min(decay, (1 + step) / (10 + step)), so that the first steps' random weights fade fast.
/// Validation, best.pt, the step checkpoints and last.pt hold the average, as Marian's
/// exponential smoothing does; a checkpoint that training may resume from also holds the
/// training weights (TrainingState::training_weights), which the optimizer goes on from.
class WeightEma {
 public:
  /// Starts the average at the weights `params` hold now (the model's own tensors, not copies):
  /// a resume builds it while the model holds last.pt's average, then puts the training weights
  /// in.
  WeightEma(std::vector<at::Tensor> params, double decay);

  /// After optimizer step `step` (1-based). Not while swapped in.
  void update(int64_t step);

  /// Exchanges the model's weights and the average: the first call puts the average into the
  /// model, the second puts the training weights back.
  void swap();
  bool swapped_in() const { return swapped_; }

  /// The tensors that are not in the model now: the average, or while it is swapped in the
  /// training weights (what a checkpoint stores beside the model's).
  const std::vector<at::Tensor>& held() const { return held_; }

  /// The effective decay at `step` (1-based).
  double decay_at(int64_t step) const;

 private:
  std::vector<at::Tensor> params_;  ///< the model's parameters
  std::vector<at::Tensor> held_;    ///< the average, or the training weights while swapped
  double decay_;
  bool swapped_ = false;
};

/// The average in the model for a scope (validation and the checkpoints it writes); a no-op for
/// a null `ema`.
class EmaWeightsIn {
 public:
  explicit EmaWeightsIn(WeightEma* ema) : ema_(ema) {
    if (ema_ != nullptr) ema_->swap();
  }
  ~EmaWeightsIn() {
    if (ema_ != nullptr) ema_->swap();
  }
  EmaWeightsIn(const EmaWeightsIn&) = delete;
  EmaWeightsIn& operator=(const EmaWeightsIn&) = delete;

 private:
  WeightEma* ema_;
};

}  // namespace nmt
