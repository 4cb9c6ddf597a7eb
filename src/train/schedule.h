#pragma once

#include <cstdint>

#include "core/config.h"

namespace nmt {

/// Learning rate for optimizer step `step` (1-based) when `progress` ∈ [0, 1] of the run's budget
/// (its step, time or epoch limit, whichever is nearest) has been used.
/// inverse_sqrt (Vaswani et al. 2017 §5.3, peak-normalised as in fairseq):
///   lr · min(step / warmup, sqrt(warmup / step)) — linear warmup to lr, then ∝ 1/sqrt(step).
/// constant: lr · min(1, step / warmup).
/// linear:   lr · min(1, step / warmup) · (1 − progress) — decays to 0 as the budget runs out.
/// cosine:   lr · min(1, step / warmup) · (1 + cos(π · progress)) / 2.
/// linear and cosine are budget-aware (Li et al. 2020, "Budgeted Training"): a run that knows it
/// has 60 minutes anneals into them instead of stopping at a still-high learning rate. warmup = 0
/// means no warmup.
double learning_rate(const TrainConfig& config, int64_t step, double progress = 0.0);

/// Fraction of the run's budget used: the largest of step / max_steps, train_seconds /
/// max_minutes and epochs_done / max_epochs over the limits that are set, clamped to [0, 1].
double budget_progress(const TrainConfig& config, int64_t step, double train_seconds,
                       double epochs_done);

}  // namespace nmt
