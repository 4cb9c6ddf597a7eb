#pragma once

// UTF-8 to code points and back, losslessly: what sacreBLEU's metrics (eval/unicode.h) and the
// training-time typos (data/augment.h) work on. Pure functions, no locale.

#include <string>

namespace nmt {

/// Decodes UTF-8 into code points. A byte that does not start a valid, shortest-form sequence
/// becomes U+DC80..U+DCFF (Python's "surrogateescape"), so bad input is kept, never rejected.
std::u32string utf8_decode(const std::string& text);

/// Encodes code points as UTF-8; the inverse of utf8_decode (surrogate escapes become bytes again).
std::string utf8_encode(const std::u32string& text);

}  // namespace nmt
