// sacreBLEU's "13a" tokenizer (Post 2018), which reproduces mteval-v13a.pl, the NIST script WMT
// used for official BLEU: Tokenizer13a's pre-processing followed by TokenizerRegexp's four
// substitutions, then whitespace normalisation.
//
// The regexes are applied here as byte scans. That is exact for UTF-8: every character class in
// them is ASCII, and a multi-byte character never contains an ASCII byte, so a scan that treats
// each byte >= 0x80 as "some non-digit, non-punctuation character" inserts the same spaces as
// Python's `re` on code points.

#include <string>

#include "eval/bleu.h"
#include "eval/regex_rules.h"
#include "eval/tokenizers.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, start)) {
    out.append(text, start, hit - start);
    out += to;
    start = hit + from.size();
  }
  out.append(text, start, std::string::npos);
  text = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

/// The class [\{-\~\[-\` -\&\(-\+\:-\@\/] of the first 13a regex: ASCII symbols and space.
/// Not in it: ' - . , digits and letters, which the later rules (or nothing) handle.
bool is_split_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

std::string apply_13a_regexes(const std::string& line) {
  using namespace regex_rules;
  const auto not_digit = [](char c) { return !is_digit(c); };
  // re.sub(r'([\{-\~\[-\` -\&\(-\+\:-\@\/])', r' \1 ', text)
  std::string text = pad_each(line, is_split_symbol);
  // ([^0-9])([\.,]) -> \1 \2 : period and comma split off unless preceded by a digit
  text = substitute_pairs(text, not_digit, is_period_or_comma, SpaceBetweenAndAfter());
  // ([\.,])([^0-9]) -> ' \1 \2' : ... and unless followed by a digit
  text = substitute_pairs(text, is_period_or_comma, not_digit, SpaceBeforeAndBetween());
  // ([0-9])(-) -> \1 \2 : a dash after a digit
  return substitute_pairs(
      text, is_digit, [](char c) { return c == '-'; }, SpaceBetweenAndAfter());
}

}  // namespace

std::string tokenize_13a(const std::string& line) {
  std::string text = line;
  replace_all(text, "<skipped>", "");
  replace_all(text, "-\n", "");
  replace_all(text, "\n", " ");
  replace_all(text, "&quot;", "\"");
  replace_all(text, "&amp;", "&");
  replace_all(text, "&lt;", "<");
  replace_all(text, "&gt;", ">");
  // sacreBLEU pads the line with one space on each side before the regexes, so a period or comma
  // at the very start or end still has a (non-digit) neighbour to match against.
  return tokenize_13a_rules(" " + text + " ");
}

std::string tokenize_13a_rules(const std::string& line) {
  return join_words(apply_13a_regexes(line));
}

}  // namespace nmt
