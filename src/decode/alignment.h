#pragma once

// Word alignment from cross-attention (`nmt translate --alignment`, serve's "alignment"): the
// Pharaoh format "i-j" of Marian, fairseq and fast_align, source word i to target word j.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "decode/translator.h"

namespace nmt {

/// The words of SentencePiece pieces: a piece that starts with "▁" (U+2581) begins a new word,
/// the first piece always does, and "</s>" and language tags ("<2xx>") belong to none (-1).
/// Returns each piece's word.
std::vector<int64_t> piece_words(const std::vector<std::string>& pieces);

/// The attention of `map` (rows: target pieces, columns: source pieces, eos last on both) summed
/// over the pieces of each word pair: mass[target word][source word]. Empty when either side has
/// no word.
std::vector<std::vector<double>> word_attention(const AttentionMap& map);

/// Each target word aligned to the source word it attends to most: the attention of `map`
/// (rows: target pieces, columns: source pieces, eos last on both) summed over the pieces of
/// each word pair. Pairs (source word, target word), in target order; one per target word.
std::vector<std::pair<int64_t, int64_t>> align_words(const AttentionMap& map);

/// "0-0 1-2 2-1": the pairs in Pharaoh format.
std::string pharaoh(const std::vector<std::pair<int64_t, int64_t>>& pairs);

}  // namespace nmt
