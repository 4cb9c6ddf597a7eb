// model/masks.cpp: padding and causal masks.
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/masks.h"

namespace nmt {
namespace {

TEST(Masks, TargetMaskIsCausalAndPadded) {
  auto tgt = torch::tensor({2, 8, 9, 0}, torch::kLong).reshape({1, 4});
  auto mask = make_target_mask(tgt, 0);
  ASSERT_EQ(mask.sizes(), (std::vector<int64_t>{1, 1, 4, 4}));
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(mask[0][0][i][j].item<bool>(), j <= i && j < 3) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace nmt
