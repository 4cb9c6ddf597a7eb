#include "eval/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "eval/lower_case_table.h"

namespace nmt {
namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b >= 0x80 <-> U+DC00 + b

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

/// Sequence length for a lead byte and the allowed range of the second byte (RFC 3629 §4):
/// the narrowed ranges exclude overlong forms, surrogates and code points above U+10FFFF.
struct LeadByte {
  size_t length;  // 0: not a lead byte
  unsigned char low;
  unsigned char high;
};

LeadByte classify_lead(unsigned char lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

/// Length of the valid UTF-8 sequence starting at text[i], or 0 if there is none.
size_t valid_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const LeadByte lead = classify_lead(byte(0));
  if (lead.length <= 1) return lead.length;
  if (i + lead.length > text.size()) return 0;
  if (byte(1) < lead.low || byte(1) > lead.high) return 0;
  for (size_t k = 2; k < lead.length; ++k) {
    if (!is_continuation(byte(k))) return 0;
  }
  return lead.length;
}

char32_t decode_sequence(const std::string& text, size_t i, size_t length) {
  const auto lead = static_cast<unsigned char>(text[i]);
  static constexpr unsigned char kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t c = lead & kLeadMask[length];
  for (size_t k = 1; k < length; ++k) {
    c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  }
  return c;
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c >= kEscapeBase + 0x80 && c <= kEscapeBase + 0xFF) {
    out += static_cast<char>(c - kEscapeBase);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool in(char32_t c, char32_t first, char32_t last) { return c >= first && c <= last; }

/// The run of kLowerCaseRuns that lowers `c`, or nullptr.
const LowerCaseRun* find_run(char32_t c) {
  const auto* end = std::end(kLowerCaseRuns);
  const auto* next =
      std::upper_bound(std::begin(kLowerCaseRuns), end, c,
                       [](char32_t x, const LowerCaseRun& run) { return x < run.first; });
  if (next == std::begin(kLowerCaseRuns)) return nullptr;
  const LowerCaseRun* run = next - 1;
  return c <= run->last && (c - run->first) % run->stride == 0 ? run : nullptr;
}

char32_t lower_simple(char32_t c) {
  const LowerCaseRun* run = find_run(c);
  return run ? static_cast<char32_t>(static_cast<std::int32_t>(c) + run->delta) : c;
}

/// Approximates Unicode's "Cased": a letter that has a lower case or is the lower case of one,
/// plus the Greek lower-case letters without a capital of their own (final sigma above all).
bool is_cased(char32_t c) {
  if (find_run(c) != nullptr || c == 0x130 || c == 0x3C2 || in(c, 0x1F00, 0x1FFF)) return true;
  for (const LowerCaseRun& run : kLowerCaseRuns) {
    const auto target = static_cast<std::int32_t>(c) - run.delta;
    if (target >= static_cast<std::int32_t>(run.first) &&
        target <= static_cast<std::int32_t>(run.last) &&
        (static_cast<char32_t>(target) - run.first) % run.stride == 0) {
      return true;
    }
  }
  return false;
}

/// The common "Case_Ignorable" code points (apostrophes, periods, colons, modifier letters,
/// combining accents, Greek tonos) that the final-sigma rule looks through.
bool is_case_ignorable(char32_t c) {
  return c == 0x27 || c == 0x2E || c == 0x3A || c == 0x5E || c == 0x60 || c == 0xA8 || c == 0xAD ||
         c == 0xAF || c == 0xB4 || c == 0xB7 || c == 0xB8 || in(c, 0x2B0, 0x36F) || c == 0x374 ||
         c == 0x375 || c == 0x37A || c == 0x384 || c == 0x385 || c == 0x387 || c == 0x2018 ||
         c == 0x2019 || c == 0x2024 || c == 0x2027;
}

/// Unicode's Final_Sigma context (Unicode §3.13, which Python's str.lower() follows): a cased
/// letter before the sigma and none after it, looking through case-ignorable code points.
bool is_final_sigma(const std::u32string& chars, size_t i) {
  size_t before = i;
  while (before > 0 && is_case_ignorable(chars[before - 1])) --before;
  if (before == 0 || !is_cased(chars[before - 1])) return false;
  size_t after = i + 1;
  while (after < chars.size() && is_case_ignorable(chars[after])) ++after;
  return after == chars.size() || !is_cased(chars[after]);
}

}  // namespace

std::u32string utf8_decode(const std::string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = valid_sequence_length(text, i);
    if (length == 0) {
      out += kEscapeBase + static_cast<unsigned char>(text[i]);
      ++i;
    } else {
      out += decode_sequence(text, i, length);
      i += length;
    }
  }
  return out;
}

std::string utf8_encode(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(c, out);
  return out;
}

bool is_unicode_space(char32_t c) {
  return in(c, 0x09, 0x0D) || in(c, 0x1C, 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         in(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

std::vector<std::string> split_unicode_whitespace(const std::string& text) {
  std::vector<std::string> words;
  std::u32string word;
  for (char32_t c : utf8_decode(text)) {
    if (!is_unicode_space(c)) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(utf8_encode(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(utf8_encode(word));
  return words;
}

std::string join_words(const std::string& text) {
  std::string joined;
  for (const std::string& word : split_unicode_whitespace(text)) {
    if (!joined.empty()) joined += ' ';
    joined += word;
  }
  return joined;
}

std::string rstrip_unicode_whitespace(const std::string& text) {
  std::u32string chars = utf8_decode(text);
  while (!chars.empty() && is_unicode_space(chars.back())) chars.pop_back();
  return utf8_encode(chars);
}

std::string strip_unicode_whitespace(const std::string& text) {
  const std::u32string chars = utf8_decode(text);
  size_t begin = 0, end = chars.size();
  while (begin < end && is_unicode_space(chars[begin])) ++begin;
  while (end > begin && is_unicode_space(chars[end - 1])) --end;
  return utf8_encode(chars.substr(begin, end - begin));
}

std::string unicode_lower(const std::string& text) {
  const std::u32string chars = utf8_decode(text);
  std::u32string out;
  out.reserve(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) {
    const char32_t c = chars[i];
    if (c == 0x130) {  // İ -> i + combining dot above, as Python's full case mapping does
      out += U"i\u0307";
    } else if (c == 0x3A3) {  // Σ -> ς at the end of a word, else σ
      out += is_final_sigma(chars, i) ? char32_t{0x3C2} : char32_t{0x3C3};
    } else {
      out += lower_simple(c);
    }
  }
  return utf8_encode(out);
}

}  // namespace nmt
