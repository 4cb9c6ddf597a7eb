#pragma once

#include <string>
#include <vector>

namespace nmt {

/// Corpus TER (Snover et al. 2006, "A Study of Translation Edit Rate with Targeted Human
/// Annotation") as sacreBLEU 2.x computes it with its defaults, which follow Tercom: words are
/// the lowercased segment split at whitespace (no other normalisation, punctuation kept); the
/// edits are the fewest insertions, deletions, substitutions and shifts of word sequences, found
/// by Tercom's greedy shift search; TER = 100 × all edits / all reference words.
struct TerScore {
  double score = 0.0;       ///< 0.. (above 100 when the edits outnumber the reference words)
  long long edits = 0;      ///< summed over the corpus
  long long ref_words = 0;  ///< summed over the corpus
  std::string signature;    ///< nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:...
  std::string to_string() const;  ///< "TER = 52.31"
};

/// The edits that turn `hypothesis` into `reference` (both already split into words), Tercom's
/// way: shifts while one lowers the edit distance (at most 10 words moved up to 50 positions, at
/// most 1000 candidate shifts tried per sentence), then the beam-limited Levenshtein distance.
long long translation_edits(const std::vector<std::string>& hypothesis,
                            const std::vector<std::string>& reference);

/// Corpus TER of hypotheses against references (same size; an nmt::Error otherwise). An empty
/// reference counts the hypothesis' words as edits and adds no reference words.
TerScore corpus_ter(const std::vector<std::string>& hypotheses,
                    const std::vector<std::string>& references);

}  // namespace nmt
