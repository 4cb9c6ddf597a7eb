// model/dropout.cpp: the Dropout module (its masks: test_cpu_kernels.cpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/dropout.h"

namespace nmt {
namespace {

TEST(Dropout, IdentityInEvalModeAndReproducibleInTraining) {
  Dropout dropout(0.5);
  const auto x = torch::randn({8, 16}, torch::kBFloat16);
  dropout->eval();
  EXPECT_TRUE(torch::equal(dropout->forward(x), x));
  dropout->train();
  torch::manual_seed(9);
  const auto first = dropout->forward(x);
  EXPECT_EQ(first.scalar_type(), torch::kBFloat16);
  torch::manual_seed(9);
  EXPECT_TRUE(torch::equal(first, dropout->forward(x)));
  EXPECT_FALSE(torch::equal(first, dropout->forward(x)));
}
}  // namespace
}  // namespace nmt
