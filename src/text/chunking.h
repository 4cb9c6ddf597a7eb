#pragma once

// Nothing is cut: a sentence longer than the model reads is split again, at clause punctuation
// first (, ; : and dashes), then between words, then inside a word, into parts that each fit,
// translated in order (text/document.h).

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "text/sentences.h"

namespace nmt {

/// How many source pieces a text encodes to (without eos).
using PieceCounter = std::function<size_t(const std::string& text)>;

/// text[span] as parts of at most `limit` pieces each (by `count`), in order, covering every
/// non-space character of the span (whitespace between parts is left to the caller, as between
/// sentences). One part, the span trimmed, when it fits. Parts end at clause punctuation where
/// that suffices, else at word boundaries, else inside a word (at code points). `limit` >= 1.
/// The pieces of a word are counted alone: SentencePiece segments each whitespace-separated
/// word independently, so the pieces of a part are the sum of its words'.
std::vector<TextSpan> split_to_fit(const std::string& text, TextSpan span, size_t limit,
                                   const PieceCounter& count);

}  // namespace nmt
