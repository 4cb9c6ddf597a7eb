// core/precision.cpp: fp32 / bf16 / auto and the autocast guard.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/precision.h"

namespace nmt {
namespace {

/// The CPU flags Linux reports in /proc/cpuinfo (empty elsewhere).
std::string cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

TEST(Precision, AutoIsBf16OnlyOnCpusWithBf16InstructionsAndFp32OnCuda) {
  // The CPUID check agrees with the kernel's own reading of the CPU.
  const std::string flags = cpuinfo_flags();
  if (!flags.empty()) {
    EXPECT_EQ(cpu_has_bf16_dot_product(), flags.find(" avx512_bf16 ") != std::string::npos)
        << flags;
  }
  EXPECT_EQ(resolve_precision(Precision::kAuto, at::kCPU),
            cpu_has_bf16_dot_product() ? Precision::kBf16 : Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kAuto, at::Device(at::kCUDA, 0)), Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kFp32, at::kCPU), Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kBf16, at::kCPU),
            Precision::kBf16);  // asked for: kept, whatever the CPU
  EXPECT_EQ(resolve_precision(Precision::kBf16, at::Device(at::kCUDA, 0)), Precision::kBf16);
  // The log line warns exactly when bf16 runs on a CPU without bf16 instructions.
  const std::string described = describe_precision(Precision::kBf16, at::kCPU);
  EXPECT_EQ(described.rfind("bf16", 0), 0u) << described;
  EXPECT_EQ(described.find("warning") != std::string::npos, !cpu_has_bf16_dot_product())
      << described;
  EXPECT_EQ(describe_precision(Precision::kFp32, at::kCPU), "fp32");
  EXPECT_EQ(describe_precision(Precision::kBf16, at::Device(at::kCUDA, 0)), "bf16");
  const auto x = torch::ones({2, 2});
  {
    AutocastGuard guard(Precision::kAuto, at::kCPU);  // autocast is on exactly when auto means bf16
    EXPECT_EQ(autocast_input(x).scalar_type(),
              cpu_has_bf16_dot_product() ? at::kBFloat16 : at::kFloat);
  }
  EXPECT_EQ(autocast_input(x).scalar_type(), at::kFloat);
}

TEST(Precision, AutocastInputCastsFloatOnlyUnderBf16Autocast) {
  const auto x = torch::randn({4, 8});
  EXPECT_TRUE(autocast_input(x).is_same(x));  // autocast off: the tensor itself
  {
    AutocastGuard guard(Precision::kBf16, torch::kCPU);
    const auto cast = autocast_input(x);
    EXPECT_EQ(cast.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(cast, x.to(torch::kBFloat16)));
    const auto ids = torch::arange(4);
    EXPECT_TRUE(autocast_input(ids).is_same(ids));  // not float32: left alone
  }
  {
    AutocastGuard guard(Precision::kFp32, torch::kCPU);
    EXPECT_TRUE(autocast_input(x).is_same(x));
  }
}
}  // namespace
}  // namespace nmt
