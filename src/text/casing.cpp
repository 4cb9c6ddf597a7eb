#include "text/casing.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <cstddef>

#include "text/sentences.h"

namespace nmt {
namespace {

/// Fewer cased letters than this in capitals ("OK", "USA") is not shouting.
constexpr int kMinCasedLetters = 4;

icu::Locale case_locale(const std::string& lang) {
  std::string name = lang;
  for (auto& c : name) c = c == '-' ? '_' : c;
  return icu::Locale::createFromName(name.c_str());
}

std::string to_utf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

}  // namespace

SourceCasing detect_casing(const std::string& sentence) {
  const auto text = icu::UnicodeString::fromUTF8(sentence);
  int upper = 0, lower = 0;
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const UChar32 c = text.char32At(i);
    if (u_isUUppercase(c)) ++upper;
    if (u_isULowercase(c)) ++lower;
  }
  if (lower == 0 && upper >= kMinCasedLetters) return SourceCasing::kUpper;
  // Title Case: words that begin with a letter; the long ones (4+ letters) all capitalised,
  // short function words ("in", "a", "on") may be lower case.
  int words = 0, capitalised = 0, long_words = 0;
  for (const auto& word : text_words(sentence, {0, sentence.size()})) {
    const auto w = icu::UnicodeString::fromUTF8(sentence.substr(word.begin, word.size()));
    const UChar32 first = w.char32At(0);
    if (!u_isalpha(first)) continue;
    ++words;
    const bool capital = u_isUUppercase(first) || u_istitle(first);
    capitalised += capital ? 1 : 0;
    if (w.countChar32() < 4) continue;
    if (!capital) return SourceCasing::kAsWritten;
    ++long_words;
  }
  if (words >= 3 && long_words >= 2 && capitalised * 2 >= words) return SourceCasing::kTitle;
  return SourceCasing::kAsWritten;
}

std::string sentence_case(const std::string& sentence, const std::string& lang, bool capitalise) {
  const auto locale = case_locale(lang);
  auto text = icu::UnicodeString::fromUTF8(sentence);
  text.toLower(locale);
  for (int32_t i = 0; capitalise && i < text.length(); i = text.moveIndex32(i, 1)) {
    const UChar32 c = text.char32At(i);
    if (!u_isalpha(c)) continue;
    const int32_t end = text.moveIndex32(i, 1);
    icu::UnicodeString first(text, i, end - i);
    first.toUpper(locale);
    text.replace(i, end - i, first);
    break;
  }
  return to_utf8(text);
}
std::string upper_case(const std::string& text, const std::string& lang) {
  auto value = icu::UnicodeString::fromUTF8(text);
  value.toUpper(case_locale(lang));
  return to_utf8(value);
}

}  // namespace nmt
