#include "decode/benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include "core/special_ids.h"
#include "cpu/packed_linear.h"
#include "decode/search.h"

namespace nmt {
namespace {

using Outputs = std::vector<std::vector<int64_t>>;

/// Runs `decode` once on a few sources (allocator and kernel warm-up), then times it on all.
DecodeTiming timed(const std::string& method, const std::vector<std::vector<int64_t>>& sources,
                   const std::function<Outputs(const std::vector<std::vector<int64_t>>&)>& decode) {
  decode({sources.begin(), sources.begin() + std::min<size_t>(sources.size(), 4)});
  DecodeTiming timing;
  timing.method = method;
  const auto start = std::chrono::steady_clock::now();
  timing.outputs = decode(sources);
  timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  timing.sentences = static_cast<int64_t>(sources.size());
  for (const auto& output : timing.outputs) {
    timing.target_tokens += static_cast<int64_t>(output.size());
  }
  return timing;
}

Outputs best_tokens(std::vector<std::vector<Hypothesis>> nbest) {
  Outputs outputs;
  for (auto& hypotheses : nbest) outputs.push_back(std::move(hypotheses.front().tokens));
  return outputs;
}

/// The tutorial loop: each sentence on its own, the decoder recomputed over the whole prefix.
Outputs naive_outputs(Seq2Seq& model, const std::vector<std::vector<int64_t>>& sources,
                      const DecodeConfig& config, const at::Device& device) {
  Outputs outputs;
  for (auto ids : sources) {
    ids.push_back(kEosId);
    const auto src = at::tensor(at::ArrayRef<int64_t>(ids), at::kLong).unsqueeze(0).to(device);
    outputs.push_back(std::move(greedy_search_naive(model, src, config).front().tokens));
  }
  return outputs;
}

}  // namespace

std::vector<DecodeTiming> benchmark_decoding(Seq2Seq& model,
                                             const std::vector<std::vector<int64_t>>& sources,
                                             const DecodeConfig& config, int64_t beam,
                                             const at::Device& device) {
  const DecodeConfig greedy = config.plain_search(1);
  const DecodeConfig wide = config.plain_search(beam);
  std::vector<DecodeTiming> timings;
  timings.push_back(timed("greedy, naive loop (1 sentence, full prefix)", sources,
                          [&](const auto& s) { return naive_outputs(model, s, greedy, device); }));
  timings.push_back(timed("greedy, batched, cached", sources, [&](const auto& s) {
    return best_tokens(decode_all(model, s, greedy, device));
  }));
  timings.push_back(
      timed("beam " + std::to_string(beam) + ", batched, cached", sources,
            [&](const auto& s) { return best_tokens(decode_all(model, s, wide, device)); }));
  return timings;
}

int64_t count_differences(const DecodeTiming& a, const DecodeTiming& b) {
  int64_t differences = 0;
  for (size_t i = 0; i < std::min(a.outputs.size(), b.outputs.size()); ++i) {
    differences += a.outputs[i] != b.outputs[i] ? 1 : 0;
  }
  return differences;
}

LinearTiming benchmark_linear(int64_t rows, int64_t in, int64_t out, int64_t layers) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> weights, biases;
  std::vector<std::unique_ptr<cpu::PackedLinear>> packed;
  const bool kernel = cpu::gemm_isa() != cpu::GemmIsa::kNone;
  for (int64_t i = 0; i < layers; ++i) {
    weights.push_back(at::randn({out, in}) / std::sqrt(double(in)));
    biases.push_back(at::randn({out}));
    if (kernel) packed.push_back(std::make_unique<cpu::PackedLinear>(weights[i], biases[i]));
  }
  const at::Tensor x = at::randn({rows, in});
  const auto gflops = [&](const std::function<void(size_t)>& layer) {
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      const auto start = std::chrono::steady_clock::now();
      for (int repeat = 0; repeat < 4; ++repeat) {
        for (size_t i = 0; i < weights.size(); ++i) layer(i);
      }
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return 2.0 * double(rows * in * out) * double(4 * weights.size()) / best / 1e9;
  };
  LinearTiming timing{rows, in, out};
  timing.libtorch_gflops = gflops([&](size_t i) { at::linear(x, weights[i], biases[i]); });
  if (kernel) {
    timing.packed_gflops = gflops([&](size_t i) { packed[i]->forward(x); });
    timing.max_difference =
        (packed[0]->forward(x) - at::linear(x, weights[0], biases[0])).abs().max().item<double>();
  }
  return timing;
}

}  // namespace nmt
