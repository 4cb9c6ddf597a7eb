// The BLEU tokenizers other than 13a (tokenizer_13a.cpp) and MeCab's (tokenizer_ja_mecab.cpp),
// following sacreBLEU 2.x's tokenizers module: intl (mteval-v14.pl), char, zh and none.

#include "eval/tokenizers.h"

#include <unicode/uchar.h>

#include "core/error.h"
#include "eval/bleu.h"
#include "eval/regex_rules.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

/// Unicode general categories as ICU reports them (Unicode 15 in Debian 12's ICU 72).
bool is_punctuation(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}
bool is_symbol(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_S_MASK) != 0; }
bool is_number(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0; }

/// sacreBLEU's TokenizerV14International: (\P{N})(\p{P}) -> "\1 \2 ", then
/// (\p{P})(\P{N}) -> " \1 \2", then (\p{S}) -> " \1 ". A period after a number at the very end
/// stays attached, as in mteval-v14.pl (no padding).
std::string tokenize_intl(const std::string& line) {
  using namespace regex_rules;
  const auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string text = utf8_decode(line);
  text = substitute_pairs(text, not_number, is_punctuation, SpaceBetweenAndAfter());
  text = substitute_pairs(text, is_punctuation, not_number, SpaceBeforeAndBetween());
  return join_words(utf8_encode(pad_each(text, is_symbol)));
}

/// sacreBLEU's TokenizerChar: every character a token (whitespace disappears in the split).
std::string tokenize_char(const std::string& line) {
  std::u32string spaced;
  for (char32_t c : utf8_decode(line)) {
    if (is_unicode_space(c)) continue;
    if (!spaced.empty()) spaced += U' ';
    spaced += c;
  }
  return utf8_encode(spaced);
}

/// sacreBLEU's TokenizerZh._is_chinese_char. Its table is kept as it is, including two entries
/// written with five hex digits in a four-digit escape ('\u20000', '\u2f800'): Python reads each
/// as a two-character string, so those ranges compare as U+2001..U+2A6D and U+2F81..U+2FA1 (they
/// catch general punctuation such as dashes, quotes and the ellipsis, not CJK Extension B).
bool is_chinese_char(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
      {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF},
      {0x3000, 0x303F}, {0x31C0, 0x31EF}, {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F},
      {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
      {0x3200, 0x32FF}, {0x3300, 0x33FF}};
  for (const auto& [first, last] : kRanges) {
    if (c >= first && c <= last) return true;
  }
  return false;
}

/// sacreBLEU's TokenizerZh: strip, a space on each side of every Chinese character, then 13a's
/// rules (TokenizerRegexp, without 13a's padding and unescaping).
std::string tokenize_zh(const std::string& line) {
  const std::u32string text = utf8_decode(strip_unicode_whitespace(line));
  return tokenize_13a_rules(utf8_encode(regex_rules::pad_each(text, is_chinese_char)));
}

}  // namespace

BleuTokenizer resolve_bleu_tokenizer(BleuTokenizer tokenizer, const std::string& target_language) {
  if (tokenizer != BleuTokenizer::kAuto) return tokenizer;
  if (target_language == "zh") return BleuTokenizer::kZh;
  if (target_language == "ja") return BleuTokenizer::kJaMecab;
  return BleuTokenizer::k13a;
}

std::string tokenize_for_bleu(const std::string& line, BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::k13a:
      return tokenize_13a(line);
    case BleuTokenizer::kIntl:
      return tokenize_intl(line);
    case BleuTokenizer::kChar:
      return tokenize_char(line);
    case BleuTokenizer::kZh:
      return tokenize_zh(line);
    case BleuTokenizer::kJaMecab:
      return tokenize_ja_mecab(line);
    case BleuTokenizer::kNone:
      return line;
    case BleuTokenizer::kAuto:
      break;
  }
  throw Error(
      "tokenize_for_bleu: the tokenizer 'auto' must be resolved from the target "
      "language first (resolve_bleu_tokenizer)");
}

std::string bleu_tokenizer_signature(BleuTokenizer tokenizer) {
  if (tokenizer == BleuTokenizer::kJaMecab) return "ja-mecab-" + mecab_version() + "-IPA";
  return choice_name(tokenizer);
}

}  // namespace nmt
