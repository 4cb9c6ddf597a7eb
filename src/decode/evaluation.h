#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/batching.h"
#include "data/corpus.h"
#include "decode/translator.h"
#include "eval/metrics.h"
#include "model/seq2seq.h"

namespace nmt {

/// Teacher-forced cross-entropy totals over target tokens (eos included, padding excluded).
struct LossStats {
  double loss_sum = 0.0;  ///< summed negative log-likelihood, nats
  int64_t tokens = 0;     ///< target tokens scored
  double loss() const { return tokens > 0 ? loss_sum / static_cast<double>(tokens) : 0.0; }
  double perplexity() const { return std::exp(loss()); }
};

/// Plain cross-entropy (no label smoothing) of `examples` under teacher forcing, in length-sorted
/// token-budget batches; only non-padding positions are projected to the vocabulary. Sides longer
/// than the model's position table are cut to model.max_len - 1 tokens.
/// `stop` (optional) is asked before each batch; once it says true the sums so far come back.
/// An ensemble's loss is that of its members' mean token log-probabilities.
LossStats teacher_forced_loss(const Ensemble& models, std::vector<Example> examples,
                              int64_t batch_tokens, const at::Device& device,
                              StopCheck stop = nullptr);

/// The model's log-probability of one target given its source (teacher-forced, eos included).
struct SentenceScore {
  double log_prob = 0.0;  ///< sum over the target's tokens, nats (≤ 0)
  int64_t tokens = 0;     ///< target tokens scored: pieces + eos
  double mean() const { return tokens > 0 ? log_prob / static_cast<double>(tokens) : 0.0; }
};

/// Scores every pair of `examples` (forced decoding, as `nmt score`): one SentenceScore per
/// example, in their order, batched as teacher_forced_loss. A side longer than the model's
/// position table (model.max_len - 1 pieces) is an nmt::Error naming the 1-based pair, its length
/// and the limit (never a score of a cut sentence). `stop` (optional) is asked before each batch;
/// once it says true the scores so far come back with the rest left at tokens = 0.
/// Pairs of texts encoded for teacher forcing: source i with encode_src, target i with
/// encode_tgt (as many targets as sources).
/// A multilingual model's pairs get the tag of `tgt_lang` (data/language_tags.h).
std::vector<Example> encode_pairs(const Tokenizer& tokenizer, const std::vector<std::string>& src,
                                  const std::vector<std::string>& tgt,
                                  const LanguageTags& tags = {}, const std::string& tgt_lang = "");

/// An ensemble scores each token by its members' mean log-probability.
std::vector<SentenceScore> teacher_forced_scores(const Ensemble& models,
                                                 const std::vector<Example>& examples,
                                                 int64_t batch_tokens, const at::Device& device,
                                                 StopCheck stop = nullptr);

/// What `nmt evaluate` reports on one test set.
struct EvaluationReport {
  LossStats loss;
  MetricScores scores;                  ///< BLEU (and lowercased), chrF, TER of the hypotheses
  std::vector<std::string> hypotheses;  ///< best translation per source line, in order
  double decode_seconds = 0.0;          ///< wall-clock of translation only
  int64_t target_tokens = 0;            ///< pieces generated (eos excluded)
  /// The translator's stop check fired: `hypotheses` holds the first lines only (those
  /// translated before it, in order) and no scores were computed.
  bool interrupted = false;
  double sentences_per_second() const;
  double tokens_per_second() const;
};

/// Translates source lines, one result per line, in order.
using TranslateLines =
    std::function<std::vector<TranslationResult>(const std::vector<std::string>& lines)>;

/// Scores `text` (sources and references) with the translator's model and decoding settings:
/// teacher-forced loss, then translation and BLEU/chrF/TER of the best hypotheses (sacreBLEU
/// style, as `scoring` says). `translate` translates the sources with the translator (`nmt
/// evaluate` gives text/document.h's translate_text, which splits a line longer than the model
/// reads where Translator::translate would cut it). Stops early when the translator's stop check
/// fires (see EvaluationReport::interrupted).
EvaluationReport evaluate_parallel(Translator& translator, const ParallelText& text,
                                   const ScoringOptions& scoring, const TranslateLines& translate);

}  // namespace nmt
