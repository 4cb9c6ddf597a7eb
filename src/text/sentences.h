#pragma once

// Sentence splitting of running text (`nmt translate --split sentences`, serve's "split"), with
// ICU's sentence BreakIterator for the source language and ICU's abbreviation suppressions
// ("Mr.", "e.g.", ... do not end a sentence where ICU has a list for the language: the locale
// keyword ss=standard, UAX #29 plus CLDR's segmentation exceptions).

#include <cstddef>
#include <string>
#include <vector>

namespace nmt {

/// A byte range [begin, end) of a UTF-8 text.
struct TextSpan {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

/// The sentences of `text` (valid UTF-8), in order, as byte ranges without the whitespace around
/// them: what lies between two of them (and before the first, after the last) is whitespace the
/// caller keeps, so the text can be put back together exactly. `lang` is the text's language
/// code (en, de, pt-BR, ...; an unknown one gets ICU's root rules). A text of whitespace only has
/// no sentences. Throws nmt::Error when ICU fails.
std::vector<TextSpan> split_sentences(const std::string& text, const std::string& lang);

/// Whether `c` (a code point) is whitespace as the splitter and the chunker count it: Unicode
/// White_Space.
bool is_text_space(char32_t c);

/// The byte ranges of the whitespace-separated words of text[span] (at least one non-space code
/// point each), in order.
std::vector<TextSpan> text_words(const std::string& text, TextSpan span);

}  // namespace nmt
