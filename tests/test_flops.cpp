// train/flops.cpp: the matmul FLOP count behind every GFLOP/s figure, against a hand count.
#include <cstdint>

#include <gtest/gtest.h>

#include "core/config.h"
#include "train/flops.h"

namespace nmt {
namespace {

/// 2·m·k·n: one [m, k] × [k, n] product.
double matmul(double m, double k, double n) { return 2.0 * m * k * n; }

// d_model 4, d_ff 8, vocab 10, 1 + 1 layers; 2 rows, source 3, target 5 positions, 7 of them
// real. Every matmul the model executes, listed one by one (rows folded into m; the heads'
// products summed, so per batch row a score product is [len_q, d] × [d, len_k]).
TEST(Flops, TrainingFlopsAreThreeTimesTheHandCountedForwardPass) {
  ModelConfig model;
  model.d_model = 4;
  model.d_ff = 8;
  model.n_heads = 2;
  model.encoder_layers = 1;
  model.decoder_layers = 1;
  model.tgt_vocab_size = 10;
  const BatchShape batch{2, 3, 5, 7};
  const double src = 2 * 3, tgt = 2 * 5;
  const double encoder = 4 * matmul(src, 4, 4)                            // q, k, v, o
                         + 2 * matmul(3, 4, 3) + 2 * matmul(3, 3, 4)      // scores, context
                         + matmul(src, 4, 8) + matmul(src, 8, 4);         // feed-forward
  const double decoder = 4 * matmul(tgt, 4, 4)                            // self: q, k, v, o
                         + 2 * matmul(5, 4, 5) + 2 * matmul(5, 5, 4)      // self: scores, context
                         + 2 * matmul(tgt, 4, 4) + 2 * matmul(src, 4, 4)  // cross: q, o; k, v
                         + 2 * matmul(5, 4, 3) + 2 * matmul(5, 3, 4)      // cross: scores, context
                         + matmul(tgt, 4, 8) + matmul(tgt, 8, 4);         // feed-forward
  const double output = matmul(7, 4, 10);  // real target positions only
  EXPECT_DOUBLE_EQ(encoder, 1824.0);
  EXPECT_DOUBLE_EQ(decoder, 4864.0);
  EXPECT_DOUBLE_EQ(forward_flops(model, batch), encoder + decoder + output);
  EXPECT_DOUBLE_EQ(training_flops(model, batch), 3.0 * (encoder + decoder + output));
  // Layers multiply their part; the output projection is counted once.
  model.encoder_layers = 3;
  model.decoder_layers = 2;
  EXPECT_DOUBLE_EQ(forward_flops(model, batch), 3 * encoder + 2 * decoder + output);
}

}  // namespace
}  // namespace nmt
