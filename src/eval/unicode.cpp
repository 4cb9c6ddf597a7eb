#include "eval/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "eval/lower_case_table.h"

namespace nmt {
namespace {

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
