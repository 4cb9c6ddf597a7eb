#include "text/sentences.h"

#include <unicode/brkiter.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "core/error.h"

namespace nmt {
namespace {

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

/// ICU's locale for `lang`, with its sentence-break suppressions ("en" -> "en@ss=standard")
/// or without.
icu::Locale splitting_locale(const std::string& lang, bool suppressions) {
  std::string name = lang;
  for (auto& c : name) c = c == '-' ? '_' : c;  // pt-BR -> pt_BR
  return icu::Locale::createFromName((name + (suppressions ? "@ss=standard" : "")).c_str());
}

/// The sentence boundaries ICU finds in `text` (byte offsets, ascending, the text's end last).
std::vector<size_t> sentence_breaks(const std::string& text, const std::string& lang,
                                    bool suppressions) {
  // One iterator per language and thread, kept: building one with suppressions (ICU's
  // SimpleFilteredBreakIteratorBuilder) took a sixth of a millisecond, 5% of translating
  // 1,000 short lines (docs/lab/performance.md). An iterator is not thread-safe, so each thread has
  // its own.
  thread_local std::map<std::pair<std::string, bool>, std::unique_ptr<icu::BreakIterator>> kept;
  UErrorCode status = U_ZERO_ERROR;
  auto& breaks = kept[{lang, suppressions}];
  if (!breaks) {
    breaks.reset(
        icu::BreakIterator::createSentenceInstance(splitting_locale(lang, suppressions), status));
  }
  if (U_FAILURE(status) || !breaks) {
    kept.erase({lang, suppressions});
    throw Error("ICU cannot split sentences for language '" + lang + "': " + u_errorName(status));
  }
  // UTF-8 text as it is: the iterator's boundaries are byte offsets into `text`.
  UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  if (U_FAILURE(status))
    throw Error(std::string("ICU cannot read the text: ") + u_errorName(status));
  breaks->setText(utext, status);
  std::vector<size_t> out;
  breaks->first();
  for (int32_t end = breaks->next(); end != icu::BreakIterator::DONE; end = breaks->next()) {
    out.push_back(static_cast<size_t>(end));
  }
  // Let go of the UText before closing it: the kept iterator must not point at freed text.
  UErrorCode reset_status = U_ZERO_ERROR;
  UText* empty = utext_openUTF8(nullptr, "", 0, &reset_status);
  breaks->setText(empty, reset_status);  // the iterator keeps its own shallow clone
  utext_close(empty);
  utext_close(utext);
  return out;
}

/// Whether text[word] is a shouted word that ends a sentence: 3+ letters, all upper case,
/// then a full stop ("SINGING.", not "DR." nor "U.S.").
bool shouted_sentence_end(const std::string& text, TextSpan word) {
  if (word.empty() || text[word.end - 1] != '.') return false;
  const auto core = word_core(text, word);
  if (core.empty() || core.end + 1 != word.end) return false;
  size_t letters = 0;
  for (size_t at = core.begin; at < core.end;) {
    const auto c = static_cast<UChar32>(next_code_point(text, at));
    if (!u_isUUppercase(c)) return false;
    ++letters;
  }
  return letters >= 3;
}

}  // namespace

std::vector<TextSpan> split_sentences(const std::string& text, const std::string& lang) {
  auto breaks = sentence_breaks(text, lang, true);
  // ICU's suppressions also hold back the boundary after any ALL CAPS word with a full stop
  // ("THE DOG RUNS FAST. The man walks." stays one sentence): ICU's breaks without them are put
  // back there.
  const auto words = text_words(text, {0, text.size()});
  if (std::any_of(words.begin(), words.end(),
                  [&](TextSpan word) { return shouted_sentence_end(text, word); })) {
    const auto plain = sentence_breaks(text, lang, false);
    size_t w = 0;
    for (const size_t at : plain) {
      if (std::binary_search(breaks.begin(), breaks.end(), at)) continue;
      while (w + 1 < words.size() && words[w + 1].end <= at) ++w;
      if (words[w].end <= at && shouted_sentence_end(text, words[w])) {
        breaks.insert(std::upper_bound(breaks.begin(), breaks.end(), at), at);
      }
    }
  }
  std::vector<TextSpan> sentences;
  size_t start = 0;
  for (const size_t end : breaks) {
    const auto sentence = trim_span(text, {start, end});
    if (!sentence.empty()) sentences.push_back(sentence);
    start = end;
  }
  return sentences;
}

std::vector<TextSpan> split_run_ons(const std::string& text, TextSpan sentence,
                                    const WordCasing& words) {
  const auto tokens = text_words(text, sentence);
  std::vector<TextSpan> parts;
  size_t first = 0;  // the first word of the part being built
  for (size_t i = kRunOnMinBefore; i + kRunOnMinAfter <= tokens.size(); ++i) {
    if (i - first < kRunOnMinBefore) continue;
    const auto core = word_core(text, tokens[i]);
    if (core.begin != tokens[i].begin) continue;  // "(A", "\"Two": not a plain sentence start
    const auto& previous = tokens[i - 1];
    const auto previous_core = word_core(text, previous);
    if (previous_core.end != previous.end) continue;  // ends in punctuation
    if (!words.starts_sentences(text.substr(core.begin, core.size()))) continue;
    // Not within a name: "for Kids Food Basket", "against PM Construction Services".
    const auto next_core = word_core(text, tokens[i + 1]);
    if (words.capitalised_unusually(text.substr(previous_core.begin, previous_core.size())) ||
        words.capitalised_unusually(text.substr(next_core.begin, next_core.size()))) {
      continue;
    }
    parts.push_back({tokens[first].begin, previous.end});
    first = i;
  }
  if (parts.empty()) return {sentence};
  parts.push_back({tokens[first].begin, sentence.end});
  return parts;
}

}  // namespace nmt
