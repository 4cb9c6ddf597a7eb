#pragma once

// Guards against a decoder that loops ("TAKKKKKKKKKKKATERATE..."): CTranslate2's
// no_repeat_ngram_size and repetition_penalty (Keskar et al. 2019, CTRL §4.1), as decode options
// of every search.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "core/config.h"

namespace nmt {

/// Whether `config` switches a guard on (decode.no_repeat_ngram_size > 0 or
/// decode.repetition_penalty != 1).
bool guards_repetition(const DecodeConfig& config);

/// Applies the guards to the next-token log-probabilities `log_probs` [rows, vocab] of
/// hypotheses whose tokens so far (without bos) are `*histories[r]`:
/// - repetition_penalty p: the log-probability of every token a row has produced is multiplied by
///   p (they are all <= 0, so p > 1 makes a repeat less likely);
/// - no_repeat_ngram_size n: a token that would complete an n-gram the row already holds is
///   -inf (n = 1: any token it has produced).
/// Each row is then renormalised (log-softmax), so scores stay log-probabilities. Eos is never
/// banned (it is never in a history), so a row always keeps a token. A null history leaves its
/// row unguarded (a row still inside its forced prefix, whose next token is given). Nothing
/// happens when no guard is on.
void guard_repetition(at::Tensor& log_probs,
                      const std::vector<const std::vector<int64_t>*>& histories,
                      const DecodeConfig& config);

/// The tokens that would complete an n-gram `history` already holds (size `n`), in the order of
/// their first occurrence; for n = 1 every distinct token of `history`.
std::vector<int64_t> banned_by_ngrams(const std::vector<int64_t>& history, int64_t n);

}  // namespace nmt
