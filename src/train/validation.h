#pragma once

#include <cmath>

#include <ATen/ATen.h>

#include "core/config.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "eval/metrics.h"
#include "model/seq2seq.h"

namespace nmt {

/// One validation: teacher-forced loss/perplexity and, if asked, BLEU of greedy translations.
struct ValidationResult {
  double loss = 0.0;                                       ///< nats per target token (no smoothing)
  double perplexity = 0.0;                                 ///< exp(loss)
  double bleu = std::numeric_limits<double>::quiet_NaN();  ///< corpus BLEU (sacreBLEU 13a), or NaN
  double chrf = std::numeric_limits<double>::quiet_NaN();  ///< corpus chrF2, or NaN
  double seconds = 0.0;                                    ///< wall-clock of the validation

  /// The value of `metric`.
  double metric(Metric name) const { return name == Metric::kBleu ? bleu : loss; }
};

/// True if `candidate` beats `best` for `metric` (NaN `best` = nothing yet).
bool improves(Metric metric, double candidate, double best);

/// Validates `model` on `split` under train.precision (the model is left in eval() mode; the
/// caller switches back).
/// How validation scores its BLEU and chrF: train.bleu_tokenize for data.tgt_lang.
ScoringOptions validation_scoring(const Config& config);

ValidationResult validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                          const Config& config, const at::Device& device);

}  // namespace nmt
