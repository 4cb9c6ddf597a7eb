#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/config.h"

namespace nmt {

/// Sustained matmul throughput of this machine: `iterations` products of two n × n matrices in
/// `dtype` ("fp32", or "bf16" under CPU autocast as the trainer runs it) on the CPU, GFLOP/s
/// counted as 2·n³ per product. The best of `repeats` timings.
double matmul_gflops(int64_t n, const std::string& dtype, int64_t iterations = 20,
                     int64_t repeats = 3);

/// Training throughput of `config` on its data: runs `steps` optimizer steps (after `warmup`
/// untimed ones) in a temporary run directory and prints target tokens/s and model FLOP/s
/// against the matmul ceiling of the configured precision.
struct TrainBenchResult {
  double tokens_per_second = 0.0;
  double flops_per_second = 0.0;
  double fp32_ceiling = 0.0;  ///< FLOP/s of 1024² fp32 matmuls (matmul_gflops × 1e9)
  double bf16_ceiling = 0.0;  ///< FLOP/s of 1024² bf16-autocast matmuls
};
TrainBenchResult bench_train(Config config, int64_t steps, int64_t warmup, std::ostream& out);

}  // namespace nmt
