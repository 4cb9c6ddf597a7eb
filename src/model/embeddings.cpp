#include "model/embeddings.h"

#include <cmath>

#include "core/error.h"

namespace nmt {

at::Tensor sinusoidal_positions(int64_t len, int64_t d_model) {
  auto options = at::TensorOptions().dtype(at::kFloat);
  auto position = at::arange(len, options).unsqueeze(1);                    // [len, 1]
  auto two_i = at::arange(0, d_model, 2, options);                          // [ceil(d/2)]
  auto inv_freq = at::exp(two_i * (-std::log(10000.0) / double(d_model)));  // 10000^(-2i/d)
  auto angles = position * inv_freq;                                        // [len, ceil(d/2)]
  auto table = at::zeros({len, d_model}, options);
  table.index_put_({at::indexing::Slice(), at::indexing::Slice(0, at::indexing::None, 2)},
                   at::sin(angles));
  table.index_put_({at::indexing::Slice(), at::indexing::Slice(1, at::indexing::None, 2)},
                   at::cos(angles.narrow(1, 0, d_model / 2)));
  return table;
}

EmbeddingsImpl::EmbeddingsImpl(int64_t vocab_size, int64_t d_model, int64_t max_len,
                               Positions positions, double dropout_p, double word_dropout_p,
                               torch::nn::Embedding shared)
    : dropout(register_module("dropout", Dropout(dropout_p))),
      d_model_(d_model),
      max_len_(max_len) {
  if (word_dropout_p > 0.0) {
    word_dropout = register_module("word_dropout", Dropout(word_dropout_p));
  }
  tokens = shared ? shared : register_module("tokens", torch::nn::Embedding(vocab_size, d_model));
  if (positions == Positions::kLearned) {
    learned = register_module("positions", torch::nn::Embedding(max_len, d_model));
  } else {
    sinusoid_ = register_buffer("sinusoid", sinusoidal_positions(max_len, d_model));
  }
}

at::Tensor EmbeddingsImpl::forward(const at::Tensor& token_ids, int64_t offset) {
  const int64_t len = token_ids.size(1);
  if (offset + len > max_len_) {
    throw Error("sequence of " + std::to_string(offset + len) +
                " positions exceeds model.max_len = " + std::to_string(max_len_) +
                ": shorten the input (data.max_len) or train with a larger model.max_len");
  }
  auto x = tokens->forward(token_ids) * std::sqrt(double(d_model_));  // [batch, len, d_model]
  if (word_dropout && is_training()) {
    // One keep/drop draw per token, through the same Dropout as everywhere else (its CPU hash
    // masks and per-worker seed streams), applied to a [batch, len, 1] tensor of ones.
    x = x * word_dropout->forward(at::ones({token_ids.size(0), len, 1}, x.options()));
  }
  if (learned) {
    auto ids = at::arange(offset, offset + len, token_ids.options());
    x = x + learned->forward(ids).unsqueeze(0);
  } else {
    x = x + sinusoid_.narrow(0, offset, len).unsqueeze(0);
  }
  return dropout->forward(x);
}

}  // namespace nmt
