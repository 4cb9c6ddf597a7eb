// core/device.cpp: device strings.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/device.h"
#include "test_util.h"

namespace nmt {
namespace {

TEST(Device, NamesResolveAndBadOnesAreErrorsNamingThem) {
  EXPECT_EQ(resolve_device("cpu"), at::Device(at::kCPU));
  EXPECT_EQ(resolve_device("auto").is_cuda(), torch::cuda::is_available());
  for (const char* bad : {"tpu", "", "CPU", "gpu:0"}) {
    test::expect_error(
        [&] { resolve_device(bad); },
        "device '" + std::string(bad) + "' is not valid: use auto, cpu, cuda or cuda:N");
  }
  if (!torch::cuda::is_available()) {
    test::expect_error([] { resolve_device("cuda:1"); },
                       "device 'cuda:1' requested but CUDA is not available");
  } else {
    test::expect_error([] { resolve_device("cuda:x"); }, "device 'cuda:x' is not valid");
    test::expect_error([] { resolve_device("cuda:999"); }, "device 'cuda:999': only ");
    EXPECT_EQ(resolve_device("cuda"), at::Device(at::kCUDA, 0));
  }
}

}  // namespace
}  // namespace nmt
