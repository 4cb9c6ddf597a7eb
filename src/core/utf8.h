#pragma once

// UTF-8 to code points and back, losslessly: what sacreBLEU's metrics (eval/unicode.h) and the
// training-time typos (data/augment.h) work on. Pure functions, no locale.

#include <cstdint>
#include <string>

namespace nmt {

/// Decodes UTF-8 into code points. A byte that does not start a valid, shortest-form sequence
/// becomes U+DC80..U+DCFF (Python's "surrogateescape"), so bad input is kept, never rejected.
std::u32string utf8_decode(const std::string& text);

/// Encodes code points as UTF-8; the inverse of utf8_decode (surrogate escapes become bytes again).
std::string utf8_encode(const std::u32string& text);

/// Whether `c` is a full-width form of an ASCII character (U+FF01-U+FF5E: "，", "？", "："),
/// which NFKC normalisation (data.normalization nmt_nfkc and nfkc) maps to ASCII.
inline bool is_fullwidth_ascii(char32_t c) { return c >= 0xFF01 && c <= 0xFF5E; }

/// Whether a text of `chars` characters with `fullwidth` full-width forms writes them by
/// convention (Chinese, Japanese: at least 1 in 1,000) rather than by accident.
inline bool writes_fullwidth(int64_t fullwidth, int64_t chars) {
  return fullwidth > 0 && fullwidth * 1000 >= chars;
}

}  // namespace nmt
