#pragma once

// Inline tags back around the translation of the words they wrapped (Bergamot's approach: the
// model's word alignment carries each tag from its source words to their target words). The
// result nests as the source did: a tag stays inside its parent, siblings never cross, and every
// tag that opens closes, so the output is well-formed whatever the alignment says.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "text/html.h"
#include "text/sentences.h"

namespace nmt {

/// Source words and target words of one text as byte ranges, and the pairs (source word, target
/// word) that translate each other.
struct WordLinks {
  std::vector<TextSpan> src_words;
  std::vector<TextSpan> tgt_words;
  std::vector<std::pair<size_t, size_t>> links;
};

/// Symmetric links from word-level attention mass[target word][source word]: each target word to
/// the source word it attends to most, and each source word left without one to the target word
/// that attends to it most (so a tag over any source word has somewhere to go).
std::vector<std::pair<size_t, size_t>> links_from_attention(
    const std::vector<std::vector<double>>& mass);

/// The tags of `source` (its text and inline tags) placed over `target`, the translation of
/// source.text, by `alignment`: a tag wraps the target words linked to the source words it
/// wrapped (from the first to the last of them); a tag over no linked word, and a void one,
/// goes after the translation of the source word before it. Punctuation that a tag left out of
/// its source word is left out of its target word too ("<b>dog</b>." -> "<b>Hund</b>.").
/// Returns the target text with its tags, in document order (render_source writes it).
TextBlock place_tags(const TextBlock& source, const std::string& target,
                     const WordLinks& alignment);

}  // namespace nmt
