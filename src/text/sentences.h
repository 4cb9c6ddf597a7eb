#pragma once

// Sentence splitting of running text (`nmt translate --split sentences`, serve's "split"), with
// ICU's sentence BreakIterator for the source language and ICU's abbreviation suppressions
// ("Mr.", "e.g.", ... do not end a sentence where ICU has a list for the language: the locale
// keyword ss=standard, UAX #29 plus CLDR's segmentation exceptions).

#include <cstddef>
#include <string>
#include <vector>

#include "core/words.h"  // TextSpan, text_words
#include "data/word_casing.h"

namespace nmt {

/// The sentences of `text` (valid UTF-8), in order, as byte ranges without the whitespace around
/// them: what lies between two of them (and before the first, after the last) is whitespace the
/// caller keeps, so the text can be put back together exactly. `lang` is the text's language
/// code (en, de, pt-BR, ...; an unknown one gets ICU's root rules). A text of whitespace only has
/// no sentences. Throws nmt::Error when ICU fails.
std::vector<TextSpan> split_sentences(const std::string& text, const std::string& lang);

/// Words on each side of a boundary split_run_ons finds: at least this many before it...
inline constexpr size_t kRunOnMinBefore = 3;
/// ... and this many after it.
inline constexpr size_t kRunOnMinAfter = 2;

/// The sentence text[sentence] (one of split_sentences) cut where the writer left a sentence
/// boundary unpunctuated: before a sentence starter of `words` (a word that begins sentences
/// in the training sources but is written that way almost never inside one, such as "A", "Two",
/// "Ein") that follows a word ending in a letter or digit, with kRunOnMinBefore words before it
/// and kRunOnMinAfter after it in its part, and neither the word before it nor the word after it
/// capitalised unusually (a name: "a check for Kids Food Basket"; "An Asian man" is no name:
/// "Asian" is how the sources write it) ("A child splashes in the water Two men talk." ->
/// "A child splashes in the water" + "Two men talk."). The parts, in order, without the
/// whitespace between them; the sentence alone when it has no such boundary.
std::vector<TextSpan> split_run_ons(const std::string& text, TextSpan sentence,
                                    const WordCasing& words);

}  // namespace nmt
