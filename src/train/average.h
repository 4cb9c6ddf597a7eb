#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "train/checkpoint.h"

namespace nmt {

/// The first key of the model section whose values differ, as "model.KEY: A vs B", or nullopt
/// when the sections are equal (only the model section decides whether weights can be averaged).
std::optional<std::string> first_model_difference(const Config& a, const Config& b);

/// Running element-wise mean of the parameters and buffers of modules with one architecture
/// (accumulated in float64, so the order of the inputs does not matter to float32 precision).
class ParameterAverager {
 public:
  /// Adds every named parameter and buffer of `module`; a name or shape that differs from the
  /// first module's is an nmt::Error naming it and `origin`.
  void add(const torch::nn::Module& module, const std::string& origin);
  /// Copies the mean into `module` (same names and shapes), keeping its dtypes and devices.
  void write_to(torch::nn::Module& module) const;
  int64_t count() const { return count_; }

 private:
  std::map<std::string, at::Tensor> sums_;  ///< float64, CPU
  int64_t count_ = 0;
};

/// Loads `paths` (checkpoint files or run directories) one at a time onto `device` and returns
/// the first with its weights replaced by the mean of all. The model sections of the configs and
/// the tokenizers must be equal; a mismatch is an nmt::Error naming both files and the first
/// differing key. Training state is taken from the last checkpoint given.
LoadedModel average_checkpoints(const std::vector<std::filesystem::path>& paths,
                                const at::Device& device);

}  // namespace nmt
