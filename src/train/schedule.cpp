#include "train/schedule.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace nmt {

double learning_rate(const TrainConfig& config, int64_t step, double progress) {
  const double s = double(std::max<int64_t>(step, 1));
  const double p = std::clamp(progress, 0.0, 1.0);
  // A share of the budget: step / (share × the expected steps), where the expected steps are
  // step / progress at the rate so far, is progress / share, re-estimated at every step.
  const double share = config.warmup.share();
  const double warmup = double(config.warmup.steps);
  const double ramp = share > 0    ? std::min(1.0, p / share)
                      : warmup > 0 ? std::min(1.0, s / warmup)
                                   : 1.0;
  switch (config.schedule) {
    case Schedule::kConstant:
      return config.lr * ramp;
    case Schedule::kLinear:
      return config.lr * ramp * (1.0 - p);
    case Schedule::kCosine:
      return config.lr * ramp * 0.5 * (1.0 + std::cos(M_PI * p));
    case Schedule::kInverseSqrt:
      break;
  }
  if (share > 0) return p > 0 ? config.lr * std::min(p / share, std::sqrt(share / p)) : 0.0;
  if (warmup <= 0) return config.lr / std::sqrt(s);
  return config.lr * std::min(s / warmup, std::sqrt(warmup / s));
}

int64_t warmup_steps(const TrainConfig& config, int64_t step, double progress) {
  if (config.warmup.share() <= 0) return config.warmup.steps;
  if (progress <= 0) return 0;
  return int64_t(std::llround(config.warmup.share() * double(step) / progress));
}

std::string describe_budget(const TrainConfig& config) {
  std::string limits;
  const auto add = [&](const std::string& limit) {
    limits += (limits.empty() ? "" : ", ") + limit;
  };
  if (config.max_steps > 0) add("max_steps " + std::to_string(config.max_steps));
  if (config.max_minutes > 0) {
    std::ostringstream minutes;
    minutes << config.max_minutes;
    add("max_minutes " + minutes.str());
  }
  if (config.max_epochs > 0) add("max_epochs " + std::to_string(config.max_epochs));
  return limits;
}

double budget_progress(const TrainConfig& config, int64_t step, double train_seconds,
                       double epochs_done) {
  double progress = 0.0;
  if (config.max_steps > 0) progress = std::max(progress, double(step) / double(config.max_steps));
  if (config.max_minutes > 0) {
    progress = std::max(progress, train_seconds / (60.0 * config.max_minutes));
  }
  if (config.max_epochs > 0) progress = std::max(progress, epochs_done / double(config.max_epochs));
  return std::clamp(progress, 0.0, 1.0);
}

}  // namespace nmt
