#pragma once

#include <cstdint>

namespace nmt {

// Fixed special token ids, identical for every SentencePiece model the app trains, so masks and
// batches never need to consult a tokenizer: pad=0, unk=1, bos=2, eos=3.
inline constexpr int64_t kPadId = 0;
inline constexpr int64_t kUnkId = 1;
inline constexpr int64_t kBosId = 2;
inline constexpr int64_t kEosId = 3;

}  // namespace nmt
