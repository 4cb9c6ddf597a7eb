// Corpus chrF (Popović 2015, "chrF: character n-gram F-score for automatic MT evaluation") as
// sacreBLEU 2.x computes it by default: character n-grams of orders 1..6 over the segment with
// all whitespace removed, [hypothesis, reference, match] counts summed over the corpus, precision
// and recall averaged over the orders that occur, then F-beta with beta = 2 (recall weighted
// twice as much as precision, per Popović 2016). With a word order (chrF++, Popović 2017), word
// n-grams of orders 1..word_order join the character orders in both averages.

#include "eval/chrf.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "eval/signature.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

constexpr int kCharOrder = 6;
constexpr int kBeta = 2;

/// Per order n = 1..6: hypothesis n-grams, reference n-grams, matched (clipped) n-grams.
struct OrderStats {
  long long hyp = 0;
  long long ref = 0;
  long long match = 0;
};
/// The character orders first, then the word orders.
using ChrfStats = std::vector<OrderStats>;

using CharNgrams = std::unordered_map<std::u32string, long long>;
using WordNgrams = std::unordered_map<std::string, long long>;

/// Characters are Unicode code points, as in sacreBLEU (Python str), not bytes.
std::u32string chrf_characters(const std::string& line, bool lowercase) {
  const std::u32string chars = utf8_decode(lowercase ? unicode_lower(line) : line);
  std::u32string kept;
  kept.reserve(chars.size());
  for (char32_t c : chars) {
    if (!is_unicode_space(c)) kept += c;
  }
  return kept;
}

CharNgrams count_char_ngrams(const std::u32string& text, size_t n) {
  CharNgrams counts;
  for (size_t i = 0; i + n <= text.size(); ++i) ++counts[text.substr(i, n)];
  return counts;
}

/// chrF++'s word split (sacreBLEU's CHRF._remove_punctuation, after Popović's chrF++.py): words
/// at whitespace; a word longer than one character loses a final ASCII punctuation mark to a
/// token of its own, or else an initial one ("(hi)" gives "(hi" and ")", as in sacreBLEU).
std::vector<std::string> chrf_words(const std::string& line, bool lowercase) {
  const auto is_ascii_punct = [](char32_t c) {
    return c < 0x80 && std::ispunct(static_cast<unsigned char>(c)) != 0;
  };
  std::vector<std::string> words;
  for (const std::string& word : split_unicode_whitespace(lowercase ? unicode_lower(line) : line)) {
    const std::u32string chars = utf8_decode(word);
    if (chars.size() > 1 && is_ascii_punct(chars.back())) {
      words.push_back(utf8_encode(chars.substr(0, chars.size() - 1)));
      words.push_back(utf8_encode(chars.substr(chars.size() - 1)));
    } else if (chars.size() > 1 && is_ascii_punct(chars.front())) {
      words.push_back(utf8_encode(chars.substr(0, 1)));
      words.push_back(utf8_encode(chars.substr(1)));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

WordNgrams count_word_ngrams(const std::vector<std::string>& words, size_t n) {
  WordNgrams counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::string key = words[i];
    for (size_t k = 1; k < n; ++k) key += ' ' + words[i + k];
    ++counts[key];
  }
  return counts;
}

/// sacreBLEU's CHRF._get_match_statistics for one order. Note its quirk, kept here: when the
/// reference has no n-grams of an order, the hypothesis n-grams of that order are not counted.
template <class Ngrams>
void add_order(const Ngrams& hyp_ngrams, const Ngrams& ref_ngrams, OrderStats& order) {
  long long hyp_total = 0, ref_total = 0, matches = 0;
  for (const auto& [ngram, count] : hyp_ngrams) {
    hyp_total += count;
    const auto hit = ref_ngrams.find(ngram);
    if (hit != ref_ngrams.end()) matches += std::min(count, hit->second);
  }
  for (const auto& entry : ref_ngrams) ref_total += entry.second;
  order.hyp += ref_ngrams.empty() ? 0 : hyp_total;
  order.ref += ref_total;
  order.match += matches;
}

void add_sentence(const std::string& hypothesis, const std::string& reference, bool lowercase,
                  ChrfStats& stats) {
  const std::u32string hyp = chrf_characters(hypothesis, lowercase);
  const std::u32string ref = chrf_characters(reference, lowercase);
  for (size_t n = 1; n <= kCharOrder; ++n) {
    add_order(count_char_ngrams(hyp, n), count_char_ngrams(ref, n), stats[n - 1]);
  }
  if (stats.size() == kCharOrder) return;
  const std::vector<std::string> hyp_words = chrf_words(hypothesis, lowercase);
  const std::vector<std::string> ref_words = chrf_words(reference, lowercase);
  for (size_t n = 1; kCharOrder + n <= stats.size(); ++n) {
    add_order(count_word_ngrams(hyp_words, n), count_word_ngrams(ref_words, n),
              stats[kCharOrder + n - 1]);
  }
}

/// sacreBLEU's CHRF._compute_f_score with eps_smoothing=False: average precision and recall
/// over the "effective" orders (both counts non-zero), then
/// F_beta = (1 + beta^2) P R / (beta^2 P + R), scaled to 0..100.
double f_score(const ChrfStats& stats) {
  const double factor = kBeta * kBeta;
  double avg_precision = 0.0, avg_recall = 0.0;
  int effective_order = 0;
  for (const OrderStats& order : stats) {
    if (order.hyp > 0 && order.ref > 0) {
      avg_precision += static_cast<double>(order.match) / static_cast<double>(order.hyp);
      avg_recall += static_cast<double>(order.match) / static_cast<double>(order.ref);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_precision /= effective_order;
  avg_recall /= effective_order;
  if (avg_precision + avg_recall == 0.0) return 0.0;
  double score = (1 + factor) * avg_precision * avg_recall;
  score /= factor * avg_precision + avg_recall;
  return 100 * score;
}

}  // namespace

void check_chrf_word_order(int word_order) {
  if (word_order < 0 || word_order > kMaxChrfWordOrder) {
    throw Error("chrF word order " + std::to_string(word_order) +
                " is not valid: use 0 (chrF) to " + std::to_string(kMaxChrfWordOrder) +
                " (2 is chrF++)");
  }
}

std::string ChrfScore::to_string() const {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "chrF%d%s = %.2f", kBeta,
                std::string(static_cast<size_t>(word_order), '+').c_str(), score);
  return buffer;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references, bool lowercase, int word_order) {
  check_chrf_word_order(word_order);
  if (hypotheses.size() != references.size()) {
    throw Error("corpus_chrf: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                std::to_string(references.size()) +
                " references; each hypothesis needs exactly one reference line");
  }
  ChrfStats stats(static_cast<size_t>(kCharOrder + word_order));
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    add_sentence(hypotheses[i], references[i], lowercase, stats);
  }
  ChrfScore result;
  result.score = f_score(stats);
  result.word_order = word_order;
  result.signature = std::string("nrefs:1|case:") + (lowercase ? "lc" : "mixed") +
                     "|eff:yes|nc:" + std::to_string(kCharOrder) +
                     "|nw:" + std::to_string(word_order) +
                     "|space:no|version:" + metric_signature_version();
  return result;
}

double sentence_chrf(const std::string& hypothesis, const std::string& reference) {
  ChrfStats stats(kCharOrder);
  add_sentence(hypothesis, reference, /*lowercase=*/false, stats);
  return f_score(stats);
}

}  // namespace nmt
