#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace nmt {

double learning_rate(const TrainConfig& config, int64_t step) {
  const double s = double(std::max<int64_t>(step, 1));
  const double warmup = double(config.warmup_steps);
  if (config.schedule == "constant") {
    return warmup > 0 ? config.lr * std::min(1.0, s / warmup) : config.lr;
  }
  if (warmup <= 0) return config.lr / std::sqrt(s);
  return config.lr * std::min(s / warmup, std::sqrt(warmup / s));
}

}  // namespace nmt
