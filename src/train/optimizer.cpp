#include "train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include "cpu/kernels.h"

namespace nmt {
namespace {

/// The optimizer's state key for a parameter: LibTorch 1.x keys by the TensorImpl address
/// printed as a string (c10::guts::to_string), 2.x by the address itself.
template <class Key>
Key state_key(const at::Tensor& parameter) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream out;
    out << parameter.unsafeGetTensorImpl();
    return out.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

bool fusable(const at::Tensor& p) {
  return p.device().is_cpu() && p.scalar_type() == at::kFloat && p.is_contiguous() &&
         p.grad().defined() && !p.grad().is_sparse() && p.grad().is_contiguous() &&
         p.grad().scalar_type() == at::kFloat;
}

/// The fused step for Adam (decoupled = false) or AdamW; false (nothing done) when some
/// parameter does not qualify.
template <class Options, class State>
bool fused_step(torch::optim::Optimizer& optimizer, double grad_scale, bool decoupled) {
  for (auto& group : optimizer.param_groups()) {
    if (static_cast<Options&>(group.options()).amsgrad()) return false;
    for (auto& p : group.params()) {
      if (p.grad().defined() && !fusable(p)) return false;
    }
  }
  using Key = typename std::decay_t<decltype(optimizer.state())>::key_type;
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const auto& options = static_cast<Options&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = optimizer.state()[state_key<Key>(p)];
      if (!slot) {
        auto state = std::make_unique<State>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, at::MemoryFormat::Contiguous));
        state->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Contiguous));
        slot = std::move(state);
      }
      auto& state = static_cast<State&>(*slot);
      state.step(state.step() + 1);
      const double step = double(state.step());
      const double wd = options.weight_decay();
      cpu::AdamScalars s;  // Adam (Kingma & Ba 2015, Algorithm 1); AdamW (Loshchilov & Hutter 2019)
      s.grad_scale = float(grad_scale);
      s.beta1 = float(beta1);
      s.beta2 = float(beta2);
      s.l2 = decoupled ? 0.0f : float(wd);
      s.decay = decoupled ? float(1.0 - options.lr() * wd) : 1.0f;
      s.sqrt_bias_correction2 = float(std::sqrt(1.0 - std::pow(beta2, step)));
      s.eps = float(options.eps());
      s.step_size = float(options.lr() / (1.0 - std::pow(beta1, step)));
      float* param = p.data_ptr<float>();
      const float* grad = p.grad().data_ptr<float>();
      const at::Tensor exp_avg = state.exp_avg(), exp_avg_sq = state.exp_avg_sq();
      float* m = exp_avg.data_ptr<float>();
      float* v = exp_avg_sq.data_ptr<float>();
      cpu::adam_update(param, grad, m, v, p.numel(), s);
    }
  }
  return true;
}

}  // namespace

bool decays(const std::string& name, const at::Tensor& parameter, DecayOn decay_on) {
  if (decay_on == DecayOn::kAll) return true;
  if (parameter.dim() < 2) return false;
  return decay_on == DecayOn::kMatrices || name.find("embeddings.") == std::string::npos;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    const torch::OrderedDict<std::string, at::Tensor>& parameters, const TrainConfig& config) {
  const auto betas = std::make_tuple(config.adam_beta1, config.adam_beta2);
  if (config.weight_decay > 0.0) {
    const auto options = torch::optim::AdamWOptions(config.lr).betas(betas).eps(config.adam_eps);
    std::vector<at::Tensor> decayed, exempt;
    for (const auto& item : parameters) {
      (decays(item.key(), item.value(), config.weight_decay_on) ? decayed : exempt)
          .push_back(item.value());
    }
    std::vector<torch::optim::OptimizerParamGroup> groups;
    for (auto* group : {&decayed, &exempt}) {
      if (group->empty()) continue;
      auto group_options = std::make_unique<torch::optim::AdamWOptions>(options);
      group_options->weight_decay(group == &decayed ? config.weight_decay : 0.0);
      groups.emplace_back(*group, std::move(group_options));
    }
    return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
  }
  return std::make_unique<torch::optim::Adam>(
      parameters.values(), torch::optim::AdamOptions(config.lr).betas(betas).eps(config.adam_eps));
}

void clear_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) p.mutable_grad() = at::Tensor();
  }
}

double clip_scale(const std::vector<at::Tensor>& parameters, double max_norm) {
  if (max_norm <= 0.0) return 1.0;
  std::vector<at::Tensor> norms;
  for (const auto& p : parameters) {
    if (p.grad().defined()) norms.push_back(p.grad().norm());
  }
  if (norms.empty()) return 1.0;
  const double norm = at::stack(norms).norm().item<double>();
  return std::min(1.0, max_norm / (norm + 1e-6));
}

void optimizer_step(torch::optim::Optimizer& optimizer, double grad_scale) {
  if (dynamic_cast<torch::optim::AdamW*>(&optimizer) != nullptr) {
    if (fused_step<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(optimizer, grad_scale,
                                                                              true)) {
      return;
    }
  } else if (dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr) {
    if (fused_step<torch::optim::AdamOptions, torch::optim::AdamParamState>(optimizer, grad_scale,
                                                                            false)) {
      return;
    }
  }
  if (grad_scale != 1.0) {
    torch::NoGradGuard no_grad;
    for (auto& group : optimizer.param_groups()) {
      for (auto& p : group.params()) {
        if (p.grad().defined()) p.grad().mul_(grad_scale);
      }
    }
  }
  optimizer.step();
}

}  // namespace nmt
