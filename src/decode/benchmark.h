#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "model/seq2seq.h"

namespace nmt {

/// The speed of one decoding method over a set of sources.
struct DecodeTiming {
  std::string method;  ///< e.g. "greedy, batched, cached"
  int64_t sentences = 0;
  int64_t target_tokens = 0;                  ///< pieces generated (eos excluded)
  double seconds = 0.0;                       ///< wall-clock (after a short warm-up)
  std::vector<std::vector<int64_t>> outputs;  ///< best hypothesis per source, input order
  double sentences_per_second() const { return seconds > 0 ? sentences / seconds : 0.0; }
  double tokens_per_second() const { return seconds > 0 ? target_tokens / seconds : 0.0; }
};

/// Times (a) the tutorial loop, one sentence at a time, recomputing the decoder over the whole
/// prefix (greedy_search_naive), (b) batched greedy search with the decoder cache (decode_all,
/// beam 1) and (c) batched beam search with `beam`. `sources` are ids without eos, each at most
/// model.max_len - 1 long. `config` supplies length limits and the batch budget.
std::vector<DecodeTiming> benchmark_decoding(Seq2Seq& model,
                                             const std::vector<std::vector<int64_t>>& sources,
                                             const DecodeConfig& config, int64_t beam,
                                             const at::Device& device);

/// Number of sources whose outputs differ between two timings (same sources).
int64_t count_differences(const DecodeTiming& a, const DecodeTiming& b);

/// A float32 linear layer x [rows, in] · Wᵀ + b timed both ways decoding can run it.
struct LinearTiming {
  int64_t rows = 0, in = 0, out = 0;
  double libtorch_gflops = 0.0;  ///< at::linear (OpenBLAS's sgemm, which packs W at every call)
  double packed_gflops = 0.0;    ///< cpu::PackedLinear (W packed once), 0 without a kernel
  double max_difference = 0.0;   ///< largest |difference| between the two outputs
};

/// Times one layer of each shape the way a decoder step meets it: `layers` weight matrices
/// used in turn, so that they are out of the caches as in a step through a model; fastest of 5.
LinearTiming benchmark_linear(int64_t rows, int64_t in, int64_t out, int64_t layers = 16);

}  // namespace nmt
