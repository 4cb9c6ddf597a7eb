// Corpus and sentence BLEU, following sacreBLEU 2.x (Post 2018, "A Call for Clarity in Reporting
// BLEU Scores") on top of the original definition (Papineni et al. 2002, "BLEU: a Method for
// Automatic Evaluation of Machine Translation"): modified (clipped) n-gram precision for
// n = 1..4, summed over the corpus before dividing (§2.1.1), a corpus-level brevity penalty
// (§2.2.2), and the uniform geometric mean of the four precisions.

#include "eval/bleu.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "core/error.h"
#include "eval/signature.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

constexpr int kMaxOrder = 4;

/// BLEU's sufficient statistics, summed over the sentences of a corpus.
struct BleuStats {
  long long hyp_len = 0;
  long long ref_len = 0;
  std::array<long long, kMaxOrder> counts{};  // clipped matches per order
  std::array<long long, kMaxOrder> totals{};  // hypothesis n-grams per order
};

/// n-grams of orders 1..4 keyed by their tokens joined with single spaces (tokens never contain
/// a space, so n-grams of different orders cannot collide).
using NgramCounts = std::unordered_map<std::string, long long>;

NgramCounts count_ngrams(const std::vector<std::string>& tokens) {
  NgramCounts counts;
  for (size_t start = 0; start < tokens.size(); ++start) {
    std::string key = tokens[start];
    ++counts[key];
    for (size_t end = start + 1; end < tokens.size() && end < start + kMaxOrder; ++end) {
      key += ' ';
      key += tokens[end];
      ++counts[key];
    }
  }
  return counts;
}

int order_of(const std::string& ngram) {
  int order = 1;
  for (char c : ngram) order += c == ' ' ? 1 : 0;
  return order;
}

/// sacreBLEU's BLEU._preprocess_segment: optional lowercasing, rstrip, tokenize, split.
std::vector<std::string> preprocess(const std::string& line, bool lowercase,
                                    BleuTokenizer tokenizer) {
  const std::string text = lowercase ? unicode_lower(line) : line;
  return split_unicode_whitespace(tokenize_for_bleu(rstrip_unicode_whitespace(text), tokenizer));
}

void add_sentence(const std::string& hypothesis, const std::string& reference, bool lowercase,
                  BleuTokenizer tokenizer, BleuStats& stats) {
  const std::vector<std::string> hyp_tokens = preprocess(hypothesis, lowercase, tokenizer);
  const std::vector<std::string> ref_tokens = preprocess(reference, lowercase, tokenizer);
  stats.hyp_len += static_cast<long long>(hyp_tokens.size());
  stats.ref_len += static_cast<long long>(ref_tokens.size());
  const NgramCounts ref_ngrams = count_ngrams(ref_tokens);
  for (const auto& [ngram, count] : count_ngrams(hyp_tokens)) {
    const int n = order_of(ngram) - 1;
    stats.totals[n] += count;
    const auto hit = ref_ngrams.find(ngram);
    if (hit != ref_ngrams.end()) stats.counts[n] += std::min(count, hit->second);  // clipping
  }
}

/// sacreBLEU's BLEU.compute_bleu with smooth_method "exp" (Chen & Cherry 2014, method 3, the
/// NIST mteval smoothing): the k-th order with no match gets precision 1 / (2^k * total).
/// With `effective_order`, orders with no hypothesis n-grams are left out of the mean; without
/// it they count as precision 0 and the score is 0.
BleuScore compute_bleu(const BleuStats& stats, bool effective_order) {
  BleuScore result;
  result.counts = stats.counts;
  result.totals = stats.totals;
  result.hyp_len = stats.hyp_len;
  result.ref_len = stats.ref_len;
  result.brevity_penalty = 1.0;
  if (stats.hyp_len < stats.ref_len) {
    result.brevity_penalty =
        stats.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) / stats.hyp_len)
                          : 0.0;
  }
  bool any_match = false;
  for (long long count : stats.counts) any_match = any_match || count > 0;
  if (!any_match) return result;  // sacreBLEU returns 0 outright, precisions all 0

  double smooth = 1.0;
  int used_orders = kMaxOrder;
  for (int n = 0; n < kMaxOrder && stats.totals[n] > 0; ++n) {
    if (effective_order) used_orders = n + 1;
    const double total = static_cast<double>(stats.totals[n]);
    if (stats.counts[n] == 0) {
      smooth *= 2.0;
      result.precisions[n] = 100.0 / (smooth * total);
    } else {
      result.precisions[n] = 100.0 * static_cast<double>(stats.counts[n]) / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < used_orders; ++n) {
    if (result.precisions[n] == 0.0) return result;  // log(0): the geometric mean is 0
    log_sum += std::log(result.precisions[n]);
  }
  result.score = result.brevity_penalty * std::exp(log_sum / used_orders);
  return result;
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

}  // namespace

std::string BleuScore::to_string() const {
  std::string text = "BLEU = " + format_fixed(score, 2) + " ";
  for (int n = 0; n < kMaxOrder; ++n) {
    text += (n > 0 ? "/" : "") + format_fixed(precisions[n], 1);
  }
  const double ratio = ref_len > 0 ? static_cast<double>(hyp_len) / ref_len : 0.0;
  text += " (BP = " + format_fixed(brevity_penalty, 3) + " ratio = " + format_fixed(ratio, 3) +
          " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return text;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references, bool lowercase,
                      BleuTokenizer tokenizer) {
  if (hypotheses.size() != references.size()) {
    throw Error("corpus_bleu: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                std::to_string(references.size()) +
                " references; each hypothesis needs exactly one reference line");
  }
  if (tokenizer == BleuTokenizer::kAuto) {
    throw Error("corpus_bleu: resolve the tokenizer 'auto' from the target language first");
  }
  BleuStats stats;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    add_sentence(hypotheses[i], references[i], lowercase, tokenizer, stats);
  }
  // sacreBLEU's corpus_score defaults: effective_order=False (Post 2018).
  BleuScore result = compute_bleu(stats, /*effective_order=*/false);
  result.signature = std::string("nrefs:1|case:") + (lowercase ? "lc" : "mixed") +
                     "|eff:no|tok:" + bleu_tokenizer_signature(tokenizer) +
                     "|smooth:exp|version:" + metric_signature_version();
  return result;
}

double sentence_bleu(const std::string& hypothesis, const std::string& reference) {
  BleuStats stats;
  add_sentence(hypothesis, reference, /*lowercase=*/false, BleuTokenizer::k13a, stats);
  return compute_bleu(stats, /*effective_order=*/true).score;
}

}  // namespace nmt
