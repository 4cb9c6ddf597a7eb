#pragma once

#include <cstdint>

#include "core/config.h"

namespace nmt {

/// Learning rate for optimizer step `step` (1-based).
/// inverse_sqrt (Vaswani et al. 2017 §5.3, peak-normalised as in fairseq):
///   lr · min(step / warmup, sqrt(warmup / step)) — linear warmup to lr, then ∝ 1/sqrt(step).
/// constant: lr · min(1, step / warmup).  warmup = 0 means no warmup.
double learning_rate(const TrainConfig& config, int64_t step);

}  // namespace nmt
