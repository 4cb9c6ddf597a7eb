#pragma once

#include <array>
#include <string>
#include <vector>

#include "eval/tokenizers.h"

namespace nmt {

/// Corpus BLEU as sacreBLEU computes it (Papineni et al. 2002; Post 2018): 13a tokenization or
/// another of sacreBLEU's (eval/tokenizers.h),
/// n-grams 1..4 clipped against one reference, brevity penalty exp(1 - r/c) when c < r,
/// geometric mean of precisions, and sacreBLEU's default "exp" smoothing.
struct BleuScore {
  double score = 0.0;                  ///< 0..100
  std::array<double, 4> precisions{};  ///< percentages (smoothed), as sacreBLEU prints them
  std::array<long long, 4> counts{};   ///< clipped n-gram matches, n = 1..4
  std::array<long long, 4> totals{};   ///< hypothesis n-grams, n = 1..4
  double brevity_penalty = 0.0;
  long long hyp_len = 0;  ///< c: hypothesis tokens
  long long ref_len = 0;  ///< r: reference tokens
  std::string signature;  ///< e.g. nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-0.1
  /// "BLEU = 34.12 65.1/41.0/27.9/19.3 (BP = 1.000 ratio = 1.012 hyp_len = ... ref_len = ...)"
  std::string to_string() const;
};

/// sacreBLEU's "13a" tokenizer (mteval-v13a.pl): unescapes a few XML entities, splits
/// punctuation and symbols from words, keeps periods/commas inside numbers. Input is one line.
std::string tokenize_13a(const std::string& line);

/// Corpus BLEU of hypotheses against references (same size; an nmt::Error otherwise).
/// `lowercase` lowercases both sides first (case:lc in the signature); `tokenizer` splits them
/// (tok: in the signature; not kAuto). Unlike sacreBLEU, which refuses an empty reference line,
/// an empty reference is scored as zero reference tokens.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references, bool lowercase = false,
                      BleuTokenizer tokenizer = BleuTokenizer::k13a);

/// Sentence-level BLEU with sacreBLEU's sentence_bleu defaults: exp smoothing and effective
/// order (orders with no hypothesis n-grams are left out of the geometric mean).
double sentence_bleu(const std::string& hypothesis, const std::string& reference);

}  // namespace nmt
