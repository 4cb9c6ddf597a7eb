#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/config.h"
#include "data/batching.h"

namespace nmt {

/// Sustained matmul throughput of `device`: `iterations` products of two n × n matrices in
/// `dtype` ("fp32" or "bf16", operands already in that dtype) with LibTorch's current thread
/// settings (CPU) or after a synchronize (CUDA), GFLOP/s counted as 2·n³ per product. The best
/// of `repeats` timings.
double matmul_gflops(int64_t n, const std::string& dtype, int64_t iterations = 20,
                     int64_t repeats = 3, const at::Device& device = at::kCPU);

/// Square sizes the ceiling is measured at (larger on a GPU, which small products cannot fill).
std::vector<int64_t> ceiling_sizes(const at::Device& device);

/// Products timed per repeat at size n: about the same work at every size, and on a CPU no more
/// than fit in 0.1 s at `seconds_per_product` (at least one), so that a slow kernel (bf16 on a
/// CPU without bf16 instructions: 5 GFLOP/s, 3.3 s for one product of 2048) takes seconds, not
/// minutes. 0 seconds: no such limit.
int64_t ceiling_iterations(int64_t n, const at::Device& device = at::kCPU,
                           double seconds_per_product = 0.0);

/// matmul_gflops at size n with ceiling_iterations, the product's time measured first on a CPU.
double ceiling_gflops_at(int64_t n, const std::string& dtype, const at::Device& device);

/// The device's matmul ceiling for `dtype`: the best ceiling_gflops_at over ceiling_sizes.
double matmul_ceiling_gflops(const std::string& dtype, const at::Device& device = at::kCPU);

/// What probe_training_steps measured.
struct StepProbe {
  double seconds = 0.0;    ///< one pass over the batches: the median timed pass
  int64_t tgt_tokens = 0;  ///< target pieces of the batches (eos included)
  double flops = 0.0;      ///< their model FLOPs (training_flops)
  /// On a CPU, the share of the median pass's processor time other processes took from its
  /// threads (core/cpu_load.h's others_cpu_share); negative on a GPU or without /proc/stat
  double others_share = -1.0;
};

/// Times the trainer's optimizer step (forward and backward in train.precision, clipping, Adam)
/// of a new `model` on train.device, one step per batch: an untimed pass over `batches` (the
/// kernels' first calls for each shape, Adam's state), then the median of `passes` timed ones
/// (a moment of another process's work, or of a faster clock, moves one pass, not the median).
/// Touches no file; draws from LibTorch's default generator (initialisation, dropout), which a
/// trainer seeds after.
StepProbe probe_training_steps(const ModelConfig& model, const TrainConfig& train,
                               const std::vector<Batch>& batches, int passes = 3);

/// Training throughput of `config` on its data: runs `steps` optimizer steps (after `warmup`
/// untimed ones) in a temporary run directory, on the config's device, and prints target
/// tokens/s and model FLOP/s against that device's matmul ceilings.
struct TrainBenchResult {
  double tokens_per_second = 0.0;
  double flops_per_second = 0.0;
  double fp32_ceiling = 0.0;  ///< FLOP/s, matmul_ceiling_gflops("fp32") × 1e9
  double bf16_ceiling = 0.0;  ///< FLOP/s, matmul_ceiling_gflops("bf16") × 1e9
};
TrainBenchResult bench_train(Config config, int64_t steps, int64_t warmup, std::ostream& out);

}  // namespace nmt
