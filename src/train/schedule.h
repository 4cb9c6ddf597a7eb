#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"

namespace nmt {

/// Learning rate for optimizer step `step` (1-based) when `progress` ∈ [0, 1] of the run's budget
/// (its step, time or epoch limit, whichever is nearest) has been used. warmup below is
/// train.warmup in steps; a share of the budget (train.warmup "10%") ramps on progress instead:
/// min(1, progress / share), the same as steps at the rate measured so far, so that the warmup
/// follows a budget in minutes.
/// inverse_sqrt (Vaswani et al. 2017 §5.3, peak-normalised as in fairseq):
///   lr · min(step / warmup, sqrt(warmup / step)) — linear warmup to lr, then ∝ 1/sqrt(step).
/// constant: lr · min(1, step / warmup).
/// linear:   lr · min(1, step / warmup) · (1 − progress) — decays to 0 as the budget runs out.
/// cosine:   lr · min(1, step / warmup) · (1 + cos(π · progress)) / 2.
/// linear and cosine are budget-aware (Li et al. 2020, "Budgeted Training"): a run that knows it
/// has 60 minutes anneals into them instead of stopping at a still-high learning rate. warmup = 0
/// means no warmup.
double learning_rate(const TrainConfig& config, int64_t step, double progress = 0.0);

/// The warmup in optimizer steps: train.warmup's steps, or for a share of the budget its
/// estimate at `step` with `progress` of the budget used (0 before any is).
int64_t warmup_steps(const TrainConfig& config, int64_t step, double progress);

/// The limits that make up the run's budget, as the config names them: "max_minutes 8".
std::string describe_budget(const TrainConfig& config);

/// Fraction of the run's budget used: the largest of step / max_steps, train_seconds /
/// max_minutes and epochs_done / max_epochs over the limits that are set, clamped to [0, 1].
double budget_progress(const TrainConfig& config, int64_t step, double train_seconds,
                       double epochs_done);

}  // namespace nmt
