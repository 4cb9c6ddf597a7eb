#include "train/ema.h"

#include <algorithm>
#include <string>
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

void WeightEma::restore(const std::vector<at::Tensor>& training) {
  if (training.size() != params_.size()) {
    throw Error("the checkpoint's training weights have " + std::to_string(training.size()) +
                " tensors, the model " + std::to_string(params_.size()));
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!training[i].sizes().equals(params_[i].sizes())) {
      throw Error("the checkpoint's training weight " + std::to_string(i) +
                  " does not match the model's shape");
    }
    held_[i] = params_[i].detach().clone();  // the checkpoint's model weights: the average
    params_[i].detach().copy_(training[i]);
  }
}

}  // namespace nmt
