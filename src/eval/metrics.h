#pragma once

#include <string>
#include <vector>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/ter.h"

namespace nmt {

/// How hypotheses are scored (sacreBLEU's options of the same names).
struct ScoringOptions {
  bool lowercase = false;                         ///< case-insensitive BLEU and chrF
  BleuTokenizer tokenize = BleuTokenizer::kAuto;  ///< BLEU's tokenizer; kAuto: by target language
  std::string target_language;                    ///< resolves kAuto ("" gives 13a)
  int chrf_word_order = 0;                        ///< 2: chrF++
  bool ter = true;  ///< compute TER (validation, which never reads it, leaves it out)
  /// The tokenizer BLEU uses: `tokenize` resolved from `target_language`.
  BleuTokenizer bleu_tokenizer() const;
  /// An nmt::Error, before any work, when the options cannot score: a word order out of range,
  /// or a tokenizer that cannot start (ja-mecab without MeCab or its dictionary).
  void check() const;
};

/// The scores of one set of hypotheses against one reference each.
struct MetricScores {
  BleuScore bleu;
  BleuScore bleu_lowercase;  ///< case-insensitive BLEU (the same as `bleu` with lowercase)
  ChrfScore chrf;
  TerScore ter;  ///< score 0 and no signature when ScoringOptions::ter is false
};

/// BLEU (cased as the options say, and lowercased), chrF(++) and TER of `hypotheses` against
/// `references` (same size; an nmt::Error otherwise).
MetricScores score_hypotheses(const std::vector<std::string>& hypotheses,
                              const std::vector<std::string>& references,
                              const ScoringOptions& options);

}  // namespace nmt
