#include "train/average.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nmt {
namespace {

/// Every named parameter and buffer (names are unique across the two in a module tree).
std::vector<std::pair<std::string, at::Tensor>> named_state(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> state;
  for (const auto& item : module.named_parameters()) state.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) state.emplace_back(item.key(), item.value());
  return state;
}

}  // namespace

std::optional<std::string> first_model_difference(const Config& a, const Config& b) {
  const auto model_a = config_to_json(a).at("model");
  const auto model_b = config_to_json(b).at("model");
  for (const auto& [key, value] : model_a.items()) {
    const auto other = model_b.find(key);
    if (other == model_b.end() || *other != value) {
      return "model." + key + ": " + value.dump() + " vs " +
             (other == model_b.end() ? std::string("(missing)") : other->dump());
    }
  }
  return std::nullopt;
}

void ParameterAverager::add(const torch::nn::Module& module, const std::string& origin) {
  torch::NoGradGuard no_grad;
  const auto state = named_state(module);
  if (count_ > 0 && state.size() != sums_.size()) {
    throw Error(origin + ": " + std::to_string(state.size()) + " tensors, expected " +
                std::to_string(sums_.size()) + " as in the first model");
  }
  for (const auto& [name, tensor] : state) {
    const auto value = tensor.detach().to(at::kCPU, at::kDouble);
    auto found = sums_.find(name);
    if (count_ == 0) {
      sums_.emplace(name, value.clone());
    } else if (found == sums_.end() || !found->second.sizes().equals(value.sizes())) {
      throw Error(origin + ": tensor '" + name + "' is missing or has another shape than in " +
                  "the first model");
    } else {
      found->second.add_(value);
    }
  }
  ++count_;
}

void ParameterAverager::write_to(torch::nn::Module& module) const {
  TORCH_CHECK(count_ > 0, "ParameterAverager::write_to: nothing was added");
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_state(module)) {
    const auto found = sums_.find(name);
    TORCH_CHECK(found != sums_.end(), "ParameterAverager: no tensor named ", name);
    tensor.copy_(found->second / static_cast<double>(count_));
  }
}

LoadedModel average_checkpoints(const std::vector<std::filesystem::path>& paths,
                                const at::Device& device) {
  if (paths.empty()) throw Error("average: no checkpoints given");
  const auto first_path = resolve_checkpoint(paths.front());
  LoadedModel result = load_checkpoint(first_path, device);
  ParameterAverager averager;
  averager.add(*result.model, first_path.string());
  for (size_t i = 1; i < paths.size(); ++i) {
    const auto path = resolve_checkpoint(paths[i]);
    LoadedModel other = load_checkpoint(path, device);
    if (const auto difference = first_model_difference(result.config, other.config)) {
      throw Error("cannot average " + first_path.string() + " and " + path.string() +
                  ": their model configs differ at " + *difference);
    }
    if (other.tokenizer.serialized() != result.tokenizer.serialized()) {
      throw Error("cannot average " + first_path.string() + " and " + path.string() +
                  ": their tokenizers differ (trained on other data or settings)");
    }
    averager.add(*other.model, path.string());
    if (i + 1 == paths.size()) result.state = other.state;
  }
  averager.write_to(*result.model);
  return result;
}

}  // namespace nmt
