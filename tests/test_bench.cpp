// train/bench.cpp: the matmul ceiling's iteration counts and rate.
#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/bench.h"

namespace nmt {
namespace {

TEST(Bench, CeilingIterationsFitASlowKernelIntoATenthOfASecond) {
  // Without a timing: the same work at every size (20 products of 1024).
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU), 20);
  EXPECT_EQ(ceiling_iterations(2048, at::kCPU), 10);
  EXPECT_EQ(ceiling_iterations(256, at::kCPU), 80);
  // A fast product keeps that count; a slow one gets as many as fit in 0.1 s, at least one.
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU, 0.001), 20);
  EXPECT_EQ(ceiling_iterations(1024, at::kCPU, 0.02), 5);
  EXPECT_EQ(ceiling_iterations(2048, at::kCPU, 3.3), 1);  // bf16 without bf16 instructions
  EXPECT_EQ(ceiling_iterations(2048, at::Device(at::kCUDA, 0), 3.3), 1164);  // CUDA: by FLOPs
  // The measured ceiling is a real, positive rate. No floor above 0: a loaded machine can be
  // arbitrarily slow (with a floor of 0.1 GFLOP/s this test failed once, among 16 tests run at
  // once on 16 cores, each on every core, and passed alone).
  const double gflops = ceiling_gflops_at(128, "fp32", at::kCPU);
  EXPECT_TRUE(std::isfinite(gflops));
  EXPECT_GT(gflops, 0.0);
}
}  // namespace
}  // namespace nmt
