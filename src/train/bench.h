#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>

#include "core/config.h"

namespace nmt {

/// Sustained matmul throughput of this machine: `iterations` products of two n × n matrices in
/// `dtype` ("fp32" or "bf16", operands already in that dtype) on the CPU with LibTorch's current
/// thread settings, GFLOP/s counted as 2·n³ per product. The best of `repeats` timings.
double matmul_gflops(int64_t n, const std::string& dtype, int64_t iterations = 20,
                     int64_t repeats = 3);

/// Square sizes the ceiling is measured at.
inline constexpr int64_t kCeilingSizes[] = {256, 512, 1024, 2048};

/// Products timed per repeat at size n (about the same work at every size).
inline int64_t ceiling_iterations(int64_t n) { return std::max<int64_t>(2, 20 * 1024 / n); }

/// The machine's matmul ceiling for `dtype`: the best matmul_gflops over kCeilingSizes.
double matmul_ceiling_gflops(const std::string& dtype);

/// Training throughput of `config` on its data: runs `steps` optimizer steps (after `warmup`
/// untimed ones) in a temporary run directory and prints target tokens/s and model FLOP/s
/// against the matmul ceiling of the configured precision.
struct TrainBenchResult {
  double tokens_per_second = 0.0;
  double flops_per_second = 0.0;
  double fp32_ceiling = 0.0;  ///< FLOP/s, matmul_ceiling_gflops("fp32") × 1e9
  double bf16_ceiling = 0.0;  ///< FLOP/s, matmul_ceiling_gflops("bf16") × 1e9
};
TrainBenchResult bench_train(Config config, int64_t steps, int64_t warmup, std::ostream& out);

}  // namespace nmt
