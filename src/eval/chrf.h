#pragma once

#include <string>
#include <vector>

namespace nmt {

/// Corpus chrF as sacreBLEU computes it (Popović 2015): character n-grams n = 1..6 over the text
/// with whitespace removed, statistics summed over the corpus, precision/recall averaged over n,
/// F-beta with beta = 2. word_order = 0 (chrF, not chrF++).
struct ChrfScore {
  double score = 0.0;     ///< 0..100
  std::string signature;  ///< e.g. nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:nmt-0.1
  std::string to_string() const;  ///< "chrF2 = 61.23"
};

/// Corpus chrF of hypotheses against references (same size; an nmt::Error otherwise).
/// Characters are Unicode code points; `lowercase` applies Python's str.lower() first (case:lc).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references, bool lowercase = false);

/// chrF2 of one hypothesis against one reference (sacreBLEU's sentence_chrf), 0..100.
double sentence_chrf(const std::string& hypothesis, const std::string& reference);

}  // namespace nmt
