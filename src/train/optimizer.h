#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/ordered_dict.h>

#include "core/config.h"

namespace nmt {

/// Whether train.weight_decay_on (all | matrices | linear) decays the parameter called `name`
/// (a module's named_parameters() key, e.g. "decoder.layers.0.fc_1.weight"). matrices: every
/// parameter with 2+ dimensions; linear: those, except embeddings ("embeddings." in the name).
bool decays(const std::string& name, const at::Tensor& parameter, DecayOn decay_on);

/// Adam, or AdamW when train.weight_decay > 0: LibTorch's classes, so checkpoints keep their
/// optimizer state in LibTorch's format. With AdamW the parameters train.weight_decay_on exempts
/// form a second parameter group with weight decay 0 (the decayed group comes first).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    const torch::OrderedDict<std::string, at::Tensor>& parameters, const TrainConfig& config);

/// Drops every parameter's gradient (PyTorch's zero_grad(set_to_none=True), not in LibTorch 1.x):
/// backward then stores each first gradient instead of adding it to a zeroed buffer, which saves
/// a pass over all gradients twice per step.
void clear_gradients(torch::optim::Optimizer& optimizer);

/// The factor that brings the gradients' global L2 norm to at most `max_norm`:
/// min(1, max_norm / (norm + 1e-6)), clip_grad_norm_'s coefficient; 1 when max_norm <= 0.
double clip_scale(const std::vector<at::Tensor>& parameters, double max_norm);

/// optimizer.step() on the gradients multiplied by `grad_scale` (clip_scale's factor).
/// For Adam and AdamW (no amsgrad) over contiguous float32 CPU parameters the scaling, both
/// moments, bias corrections and the update are one vectorised pass per parameter instead of
/// LibTorch's seven tensor ops plus the clip's multiply, reading and writing the same
/// Adam(W)ParamState entries as LibTorch's step (checkpoints and resume are unchanged); the
/// gradients themselves are left unscaled. Anything else (CUDA, other optimizers): the
/// gradients are scaled in place, then optimizer.step().
void optimizer_step(torch::optim::Optimizer& optimizer, double grad_scale);

}  // namespace nmt
