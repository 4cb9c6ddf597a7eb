#include "core/words.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <cstdint>

namespace nmt {

char32_t next_code_point(const std::string& text, size_t& at) {
  UChar32 c = 0;
  int32_t index = static_cast<int32_t>(at);
  U8_NEXT(text.data(), index, static_cast<int32_t>(text.size()), c);
  at = static_cast<size_t>(index);
  return c < 0 ? 0xFFFD : static_cast<char32_t>(c);
}

bool is_text_space(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0; }

std::vector<TextSpan> text_words(const std::string& text, TextSpan span) {
  std::vector<TextSpan> words;
  size_t at = span.begin;
  while (at < span.end) {
    const size_t start = at;
    const bool space = is_text_space(next_code_point(text, at));
    if (space) continue;
    if (words.empty() || words.back().end != start) {
      words.push_back({start, at});
    } else {
      words.back().end = at;
    }
  }
  return words;
}

TextSpan word_core(const std::string& text, TextSpan word) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  auto begin = static_cast<int32_t>(word.begin), end = static_cast<int32_t>(word.end);
  while (begin < end) {
    int32_t next = begin;
    UChar32 c = 0;
    U8_NEXT(bytes, next, end, c);
    if (c >= 0 && u_isalnum(c)) break;
    begin = next;
  }
  while (end > begin) {
    int32_t previous = end;
    UChar32 c = 0;
    U8_PREV(bytes, begin, previous, c);
    if (c >= 0 && u_isalnum(c)) break;
    end = previous;
  }
  if (begin == end) return {word.end, word.end};
  return {size_t(begin), size_t(end)};
}

}  // namespace nmt
