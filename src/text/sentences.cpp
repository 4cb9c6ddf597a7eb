#include "text/sentences.h"

#include <unicode/brkiter.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <memory>

#include "core/error.h"

namespace nmt {
namespace {

/// The code point at byte `at` of `text`; `at` moves past it. Invalid bytes read as U+FFFD.
char32_t next_code_point(const std::string& text, size_t& at) {
  UChar32 c = 0;
  int32_t index = static_cast<int32_t>(at);
  U8_NEXT(text.data(), index, static_cast<int32_t>(text.size()), c);
  at = static_cast<size_t>(index);
  return c < 0 ? 0xFFFD : static_cast<char32_t>(c);
}

/// `span` without the whitespace at either end (empty when it is all whitespace).
TextSpan trim_span(const std::string& text, TextSpan span) {
  size_t at = span.begin;
  size_t first = span.end;
  size_t last = span.begin;
  while (at < span.end) {
    const size_t start = at;
    if (!is_text_space(next_code_point(text, at))) {
      if (first == span.end) first = start;
      last = at;
    }
  }
  if (first == span.end) return {span.begin, span.begin};
  return {first, last};
}

/// ICU's locale for `lang` with its sentence-break suppressions: "en" -> "en@ss=standard".
icu::Locale splitting_locale(const std::string& lang) {
  std::string name = lang;
  for (auto& c : name) c = c == '-' ? '_' : c;  // pt-BR -> pt_BR
  return icu::Locale::createFromName((name + "@ss=standard").c_str());
}

}  // namespace

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

std::vector<TextSpan> split_sentences(const std::string& text, const std::string& lang) {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> breaks(
      icu::BreakIterator::createSentenceInstance(splitting_locale(lang), status));
  if (U_FAILURE(status) || !breaks) {
    throw Error("ICU cannot split sentences for language '" + lang + "': " + u_errorName(status));
  }
  // UTF-8 text as it is: the iterator's boundaries are byte offsets into `text`.
  UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  if (U_FAILURE(status))
    throw Error(std::string("ICU cannot read the text: ") + u_errorName(status));
  breaks->setText(utext, status);
  std::vector<TextSpan> sentences;
  int32_t start = breaks->first();
  for (int32_t end = breaks->next(); end != icu::BreakIterator::DONE; end = breaks->next()) {
    const auto sentence = trim_span(text, {static_cast<size_t>(start), static_cast<size_t>(end)});
    if (!sentence.empty()) sentences.push_back(sentence);
    start = end;
  }
  breaks.reset();  // before the UText it reads
  utext_close(utext);
  return sentences;
}

}  // namespace nmt
