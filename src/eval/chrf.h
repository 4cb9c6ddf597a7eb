#pragma once

#include <string>
#include <vector>

namespace nmt {

/// Corpus chrF as sacreBLEU computes it (Popović 2015): character n-grams n = 1..6 over the text
/// with whitespace removed, statistics summed over the corpus, precision/recall averaged over n,
/// F-beta with beta = 2. A word order of 2 adds word uni- and bigrams: chrF++ (Popović 2017).
struct ChrfScore {
  double score = 0.0;     ///< 0..100
  int word_order = 0;     ///< 0: chrF, 2: chrF++
  std::string signature;  ///< e.g. nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:nmt-0.1
  std::string to_string() const;  ///< "chrF2 = 61.23", "chrF2++ = 58.40"
};

/// The highest word order corpus_chrf takes (sacreBLEU has no limit; chrF++ is 2).
constexpr int kMaxChrfWordOrder = 6;

/// An nmt::Error naming `word_order` unless it is 0..kMaxChrfWordOrder.
void check_chrf_word_order(int word_order);

/// Corpus chrF of hypotheses against references (same size; an nmt::Error otherwise).
/// Characters are Unicode code points; `lowercase` applies Python's str.lower() first (case:lc).
/// `word_order` (0..kMaxChrfWordOrder, else an nmt::Error): word n-gram orders added (nw:).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references, bool lowercase = false,
                      int word_order = 0);

/// chrF2 of one hypothesis against one reference (sacreBLEU's sentence_chrf), 0..100.
double sentence_chrf(const std::string& hypothesis, const std::string& reference);

}  // namespace nmt
