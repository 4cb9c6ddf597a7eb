#pragma once

#include <cstdint>

#include "core/config.h"

namespace nmt {

/// Shape of one training batch, as the model executes it.
struct BatchShape {
  int64_t rows = 0;        ///< sentences
  int64_t src_len = 0;     ///< padded source length (eos included)
  int64_t tgt_len = 0;     ///< padded target length (bos/eos included)
  int64_t tgt_tokens = 0;  ///< non-pad target positions (only these reach the output projection)
};

/// Floating-point operations of one forward pass, counting 2 per multiply-add of every matmul
/// the model executes (projections, attention scores and context, feed-forward, output
/// projection over non-pad positions); element-wise work is ignored.
double forward_flops(const ModelConfig& model, const BatchShape& batch);

/// Forward plus backward: 3 × forward (the backward pass computes gradients with respect to both
/// inputs and weights, twice the forward's matmul work; Kaplan et al. 2020, §2.1).
double training_flops(const ModelConfig& model, const BatchShape& batch);

}  // namespace nmt
