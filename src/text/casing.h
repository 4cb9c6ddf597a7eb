#pragma once

// Inference-time handling of headings and shouting: a model trained on sentence-case captions
// translates "A DOG RUNS ON THE BEACH." as noise. A sentence in ALL CAPS or Title Case is given
// to the model in sentence case, each word in its usual form when the model's word casing is
// known (data/word_casing.h); an ALL CAPS sentence's translation is upper-cased again (a
// Title Case one keeps the model's casing, which is the target language's own).

#include <string>

#include "core/case_mapping.h"  // upper_case: an ALL CAPS sentence's translation
#include "data/word_casing.h"

namespace nmt {

enum class SourceCasing {
  kAsWritten,  ///< mixed case: translated as it is
  kUpper,      ///< every cased letter upper case (at least kMinCasedLetters of them)
  kTitle,      ///< at least 3 words, at least 2 of them of 4+ letters, every such word and at
               ///< least half of all words capitalised (not all caps)
};

/// How `sentence` is cased, by the rules above.
SourceCasing detect_casing(const std::string& sentence);

/// `sentence` lower-cased, its first letter upper-cased unless `capitalise` is false ("A DOG
/// RUNS." -> "A dog runs."), by ICU's full case mappings for `lang`. With `words`, each word
/// that the training sources write otherwise inside a sentence takes that usual form ("AN ASIAN
/// MAN" -> "An Asian man", "EIN MANN" -> "Ein Mann"), as a truecaser would.
std::string sentence_case(const std::string& sentence, const std::string& lang,
                          bool capitalise = true, const WordCasing* words = nullptr);

}  // namespace nmt
