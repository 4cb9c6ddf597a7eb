#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace nmt {

double learning_rate(const TrainConfig& config, int64_t step, double progress) {
  const double s = double(std::max<int64_t>(step, 1));
  const double warmup = double(config.warmup_steps);
  const double ramp = warmup > 0 ? std::min(1.0, s / warmup) : 1.0;
  const double p = std::clamp(progress, 0.0, 1.0);
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
  if (warmup <= 0) return config.lr / std::sqrt(s);
  return config.lr * std::min(s / warmup, std::sqrt(warmup / s));
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
