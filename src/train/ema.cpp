#include "train/ema.h"

#include <algorithm>
#include <utility>

#include <torch/utils.h>

#include "core/error.h"

namespace nmt {

WeightEma::WeightEma(std::vector<at::Tensor> params, double decay)
    : params_(std::move(params)), decay_(decay) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params_) held_.push_back(p.detach().clone());
}

double WeightEma::decay_at(int64_t step) const {
  return std::min(decay_, double(1 + step) / double(10 + step));
}

void WeightEma::update(int64_t step) {
  if (swapped_) throw Error("internal: the weight average was updated while swapped in");
  torch::NoGradGuard no_grad;
  const double weight = 1.0 - decay_at(step);
  for (size_t i = 0; i < params_.size(); ++i) held_[i].lerp_(params_[i].detach(), weight);
}

void WeightEma::swap() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto model_now = params_[i].detach().clone();
    params_[i].detach().copy_(held_[i]);
    held_[i] = std::move(model_now);
  }
  swapped_ = !swapped_;
}

}  // namespace nmt
