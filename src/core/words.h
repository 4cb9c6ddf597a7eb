#pragma once

// Words as nmt's text handling counts them: whitespace-separated tokens of UTF-8 text, kept as
// byte ranges so a text can be put back together exactly. Shared by sentence splitting and tag
// placement (text/) and by what training learns about casing (data/word_casing.h).

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

/// The code point at byte `at` of `text`; `at` moves past it. Invalid bytes read as U+FFFD.
char32_t next_code_point(const std::string& text, size_t& at);

/// Whether `c` (a code point) is whitespace as the splitter and the chunker count it: Unicode
/// White_Space.
bool is_text_space(char32_t c);

/// The byte ranges of the whitespace-separated words of text[span] (at least one non-space code
/// point each), in order.
std::vector<TextSpan> text_words(const std::string& text, TextSpan span);

/// The core of the word text[word]: without the code points that are neither letters nor
/// digits at its two ends ("(dog)," -> "dog"); empty (at word.end) when it has none.
TextSpan word_core(const std::string& text, TextSpan word);

}  // namespace nmt
