#include "eval/metrics.h"

#include "core/error.h"

namespace nmt {

BleuTokenizer ScoringOptions::bleu_tokenizer() const {
  return resolve_bleu_tokenizer(tokenize, target_language);
}

void ScoringOptions::check() const {
  check_chrf_word_order(chrf_word_order);
  tokenize_for_bleu("", bleu_tokenizer());  // starts MeCab for ja-mecab, or says what is missing
}

MetricScores score_hypotheses(const std::vector<std::string>& hypotheses,
                              const std::vector<std::string>& references,
                              const ScoringOptions& options) {
  const BleuTokenizer tokenizer = options.bleu_tokenizer();
  MetricScores scores;
  scores.bleu = corpus_bleu(hypotheses, references, options.lowercase, tokenizer);
  scores.bleu_lowercase = corpus_bleu(hypotheses, references, /*lowercase=*/true, tokenizer);
  scores.chrf = corpus_chrf(hypotheses, references, options.lowercase, options.chrf_word_order);
  if (options.ter) scores.ter = corpus_ter(hypotheses, references);
  return scores;
}

}  // namespace nmt
