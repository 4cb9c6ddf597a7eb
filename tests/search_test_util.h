#pragma once

// Helpers shared by the search tests (test_search.cpp, test_beam_search.cpp,
// test_sample_search.cpp): a 24-token vocabulary, seeded random models, a part-trained model,
// random padded sources, the teacher-forced reference they are checked against, and exhaustive
// search over any next-token function.

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/special_ids.h"
#include "decode/search.h"
#include "decode_test_util.h"
#include "model/seq2seq.h"

namespace nmt::test {

constexpr int64_t kVocab = 24;

inline ModelConfig tiny_model_config(int64_t max_len = 64) {
  return small_model_config(kVocab, kVocab, max_len);
}

/// seeded_model (decode_test_util.h) of tiny_model_config's shape.
inline Seq2Seq random_model(uint64_t seed, double eos_bias = 0.0, int64_t max_len = 64) {
  return seeded_model(tiny_model_config(max_len), seed, eos_bias);
}

/// A model trained for a few dozen steps to map every source token to another, in order. A random
/// model repeats one token whatever the source; this part-trained one gives outputs that depend
/// on the source, vary in tokens and length and mostly end with eos. Seeded; trained once per
/// process and shared (the searches leave it unchanged).
inline Seq2Seq train_tiny_model() {
  torch::manual_seed(17);
  Seq2Seq model(tiny_model_config());
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(5e-3));
  std::mt19937 rng(17);
  for (int step = 0; step < 40; ++step) {
    std::vector<int64_t> src(32 * 9, kPadId), tgt(32 * 10, kPadId);  // tgt: bos + y + eos
    for (size_t row = 0; row < 32; ++row) {
      const size_t length = 1 + rng() % 8;
      tgt[row * 10] = kBosId;
      for (size_t i = 0; i < length; ++i) {
        const int64_t x = 4 + static_cast<int64_t>(rng() % (kVocab - 4));
        src[row * 9 + i] = x;
        tgt[row * 10 + i + 1] = (x * 7) % (kVocab - 4) + 4;
      }
      src[row * 9 + length] = kEosId;
      tgt[row * 10 + length + 1] = kEosId;
    }
    const auto src_t = torch::tensor(src).view({32, 9});
    const auto tgt_t = torch::tensor(tgt).view({32, 10});
    const auto logits = model->forward(src_t, tgt_t.slice(1, 0, 9));  // [32, 9, vocab]
    const auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, kVocab}), tgt_t.slice(1, 1).reshape(-1),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kPadId));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  model->eval();
  return model;
}

inline Seq2Seq trained_model() {
  static const Seq2Seq model = train_tiny_model();
  return model;
}

/// Padded, eos-terminated sources [batch, longest + 1] with the given lengths (eos excluded).
inline at::Tensor random_sources(const std::vector<int64_t>& lengths, uint64_t seed) {
  torch::manual_seed(seed);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  auto src = at::zeros({static_cast<int64_t>(lengths.size()), longest + 1}, at::kLong);
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto r = static_cast<int64_t>(row);
    src[r].slice(0, 0, lengths[row]) = torch::randint(4, kVocab, {lengths[row]}, at::kLong);
    src[r][lengths[row]] = kEosId;
  }
  return src;
}

inline DecodeConfig decode_config(int64_t beam = 1, int64_t nbest = 1, int64_t offset = 10) {
  DecodeConfig config;
  config.beam = beam;
  config.nbest = nbest;
  config.max_len_offset = offset;
  return config;
}

/// Next-token log-probabilities after `prefix` by a teacher-forced full forward pass: an
/// independent reference for the search. -> [vocab]
inline at::Tensor reference_next(Seq2Seq& model, const at::Tensor& src,
                                 const std::vector<int64_t>& prefix) {
  torch::NoGradGuard no_grad;
  const auto logits = model->forward(src, torch::tensor(prefix).unsqueeze(0));  // [1, t, V]
  return at::log_softmax(logits[0][-1], -1);
}

/// The rows of `src` (from random_sources) as id vectors without eos, for decode_all.
inline std::vector<std::vector<int64_t>> source_ids(const at::Tensor& src,
                                                    const std::vector<int64_t>& lengths) {
  std::vector<std::vector<int64_t>> sources;
  for (size_t row = 0; row < lengths.size(); ++row) {
    const auto ids = src[static_cast<int64_t>(row)].slice(0, 0, lengths[row]).contiguous();
    sources.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
  return sources;
}

/// The next-token log-probabilities [vocab] after `prefix` (target tokens, without bos).
using PrefixLogProbs = std::function<at::Tensor(const std::vector<int64_t>& prefix)>;

/// The model's teacher-forced next-token log-probabilities (reference_next) given one unpadded
/// source row [1, src_len], as a PrefixLogProbs. The model is shared: it must outlive the result.
inline PrefixLogProbs model_next(Seq2Seq model, const at::Tensor& src) {
  return [model, src](const std::vector<int64_t>& prefix) mutable {
    std::vector<int64_t> input = {kBosId};
    input.insert(input.end(), prefix.begin(), prefix.end());
    return reference_next(model, src, input);
  };
}

/// Every output a search can produce, by exhaustive enumeration: tokens other than pad, bos and
/// eos, at most `limit` of them, each ended by eos or cut at the limit. Scored as beam search
/// scores them (log-prob over the GNMT penalty with exponent `alpha`); best first.
inline std::vector<Hypothesis> exhaustive_outputs(const PrefixLogProbs& next, int64_t vocab,
                                                  int64_t limit, double alpha) {
  std::vector<Hypothesis> all;
  std::vector<std::pair<std::vector<int64_t>, double>> prefixes = {{{}, 0.0}};
  while (!prefixes.empty()) {
    auto [tokens, log_prob] = prefixes.back();
    prefixes.pop_back();
    const auto log_probs = next(tokens).to(at::kDouble);
    const auto length = static_cast<int64_t>(tokens.size());
    const double with_eos = log_prob + log_probs[kEosId].item<double>();
    all.push_back({tokens, with_eos, with_eos / gnmt_length_penalty(length + 1, alpha)});
    for (int64_t token = 0; token < vocab; ++token) {
      if (token == kPadId || token == kBosId || token == kEosId) continue;
      auto longer = tokens;
      longer.push_back(token);
      const double lp = log_prob + log_probs[token].item<double>();
      if (length + 1 == limit) {  // cut at the limit, without eos
        all.push_back({longer, lp, lp / gnmt_length_penalty(length + 1, alpha)});
      } else {
        prefixes.emplace_back(longer, lp);
      }
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  return all;
}

}  // namespace nmt::test
