#include "text/casing.h"

#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstddef>

#include "text/sentences.h"

namespace nmt {
namespace {

/// Fewer cased letters than this in capitals ("OK", "USA") is not shouting.
constexpr int kMinCasedLetters = 4;

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

std::string sentence_case(const std::string& sentence, const std::string& lang, bool capitalise,
                          const WordCasing* words) {
  std::string text = lower_case(sentence, lang);
  if (words != nullptr && !words->empty()) {
    std::string cased;
    size_t at = 0;
    for (const auto& word : text_words(text, {0, text.size()})) {
      const auto core = word_core(text, word);
      const auto* form = words->usual_form(text.substr(core.begin, core.size()));
      if (form == nullptr) continue;
      cased += text.substr(at, core.begin - at) + *form;
      at = core.end;
    }
    text = cased + text.substr(at);
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const auto length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; capitalise && i < length;) {
    const int32_t begin = i;
    UChar32 c = 0;
    U8_NEXT(bytes, i, length, c);
    if (c < 0 || !u_isalpha(c)) continue;
    const size_t size = size_t(i - begin);
    return text.substr(0, size_t(begin)) + upper_case(text.substr(size_t(begin), size), lang) +
           text.substr(size_t(i));
  }
  return text;
}

}  // namespace nmt
