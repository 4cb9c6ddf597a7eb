#pragma once

// Training-time noise (data.augment; core/config.h's AugmentConfig): each epoch, a pair may be
// upper-cased or title-cased on both sides, lose its final punctuation on both sides, or get
// character typos on its source, so that a model trained on clean captions also sees headings,
// chat and slips of the keyboard (OpusTrainer's modifiers: UpperCase, TitleCase, Typos).

#include <cstdint>
#include <random>
#include <string>

#include "core/config.h"

namespace nmt {

/// How many pairs of an epoch got each modification.
struct AugmentCounts {
  size_t pairs = 0;  ///< pairs seen
  size_t upper = 0, title = 0, no_final_punct = 0, typos = 0;
  size_t changed = 0;  ///< pairs with at least one modification
  /// modified pairs kept as they were: a side came out longer than data.max_len pieces (not in
  /// the counts above)
  size_t too_long = 0;
};

/// Adds `part`'s counts to `total`.
void add_counts(AugmentCounts& total, const AugmentCounts& part);

/// `text` without its trailing sentence-final punctuation (Unicode's Sentence_Terminal: . ! ?
/// and their forms in other scripts, and "…") and the whitespace around it; `text` itself when
/// it ends otherwise.
std::string drop_final_punctuation(const std::string& text);

/// `text` with `count` character typos at letters drawn from `rng`: a letter swapped with the
/// next one, dropped, doubled or replaced by another letter of `text`. Other characters (spaces,
/// digits, punctuation) are never touched; `text` without letters comes back as it is.
std::string add_typos(const std::string& text, int64_t count, std::mt19937_64& rng);

/// The typos add_typos makes in a source of `characters` code points: one per started 40.
int64_t typos_for(size_t characters);

/// Applies `config` to one pair (`src` in `src_lang`, `tgt` in `tgt_lang`) in place with draws
/// from `rng`: exactly four draws a pair whatever happens, so the pairs after it get the same
/// draws when a probability changes. Returns whether anything changed; `counts` gets what did.
bool augment_pair(const AugmentConfig& config, const std::string& src_lang,
                  const std::string& tgt_lang, std::mt19937_64& rng, std::string& src,
                  std::string& tgt, AugmentCounts& counts);

/// One line for the log: "data.augment: epoch 3: 5774 of 29000 pairs modified (1451
/// upper-cased, ...)".
std::string describe(const AugmentCounts& counts, int64_t epoch);

}  // namespace nmt
