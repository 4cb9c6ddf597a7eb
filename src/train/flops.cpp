#include "train/flops.h"

namespace nmt {

double forward_flops(const ModelConfig& m, const BatchShape& b) {
  const double d = double(m.d_model), ff = double(m.d_ff);
  const double src = double(b.rows * b.src_len), tgt = double(b.rows * b.tgt_len);
  const double ls = double(b.src_len), lt = double(b.tgt_len);
  const double projections = 4 * 2 * d * d;  // q, k, v, o per position
  const double feedforward = 2 * 2 * d * ff;
  // Encoder: self-attention over src_len keys (scores + context = 2 matmuls of d per key).
  const double encoder = src * (projections + feedforward + 2 * 2 * ls * d);
  // Decoder: self-attention (all tgt_len keys are computed, masked or not), cross-attention
  // (q, o on target positions; k, v on source positions), feed-forward.
  const double decoder = tgt * (projections + 2 * 2 * lt * d) +
                         tgt * (2 * 2 * d * d + 2 * 2 * ls * d) + src * (2 * 2 * d * d) +
                         tgt * feedforward;
  const double output = double(b.tgt_tokens) * 2 * d * double(m.tgt_vocab_size);
  return double(m.encoder_layers) * encoder + double(m.decoder_layers) * decoder + output;
}

double training_flops(const ModelConfig& model, const BatchShape& batch) {
  return 3.0 * forward_flops(model, batch);
}

}  // namespace nmt
