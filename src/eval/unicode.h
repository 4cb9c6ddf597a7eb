#pragma once

#include <string>
#include <vector>

#include "core/utf8.h"  // utf8_decode, utf8_encode

namespace nmt {

/// The few Unicode operations the metrics need to match sacreBLEU, which works on Python `str`
/// (code points), not on bytes. Pure functions, no locale.

/// Python's str.isspace(): ASCII whitespace, U+001C..U+001F, NEL, NBSP, U+1680, U+2000..U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000. This is what str.split() and str.strip() use.
bool is_unicode_space(char32_t c);

/// Python's str.split() with no argument: runs of Unicode whitespace separate words.
std::vector<std::string> split_unicode_whitespace(const std::string& text);

/// Python's ' '.join(text.split()): words separated by single spaces, none at either end.
std::string join_words(const std::string& text);

/// Python's str.rstrip() with no argument.
std::string rstrip_unicode_whitespace(const std::string& text);

/// Python's str.strip() with no argument.
std::string strip_unicode_whitespace(const std::string& text);

/// Python's str.lower(): every one-to-one mapping of Unicode 14 (lower_case_table.h), U+0130 to
/// "i" + U+0307, and Greek capital sigma to final sigma at the end of a word (the "Cased" and
/// "Case_Ignorable" properties that rule needs are approximated; see unicode.cpp).
std::string unicode_lower(const std::string& text);

}  // namespace nmt
