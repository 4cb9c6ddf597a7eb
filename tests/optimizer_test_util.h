#pragma once

// Parameters shared by the optimizer tests (test_optimizer.cpp, test_cpu_kernels.cpp).

#include <torch/torch.h>

#include <string>

namespace nmt::test {

/// Parameters named as a model names them: one large enough to be split across threads (and of
/// odd length, so the vector loop's tail counts), a matrix, a tiny bias and an embedding table.
inline torch::OrderedDict<std::string, at::Tensor> adam_parameters() {
  torch::manual_seed(3);
  torch::OrderedDict<std::string, at::Tensor> parameters;
  parameters.insert("encoder.layers.0.feedforward.fc_1.weight",
                    torch::randn({100003}).requires_grad_());
  parameters.insert("decoder.layers.0.self_attention.fc_q.weight",
                    torch::randn({31, 17}).requires_grad_());
  parameters.insert("decoder.layers.0.self_attention.fc_q.bias",
                    torch::randn({7}).requires_grad_());
  parameters.insert("encoder.embeddings.tokens.weight", torch::randn({13, 5}).requires_grad_());
  return parameters;
}

inline torch::OrderedDict<std::string, at::Tensor> clones(
    const torch::OrderedDict<std::string, at::Tensor>& parameters) {
  torch::OrderedDict<std::string, at::Tensor> out;
  for (const auto& item : parameters) {
    out.insert(item.key(), item.value().detach().clone().requires_grad_());
  }
  return out;
}

}  // namespace nmt::test
