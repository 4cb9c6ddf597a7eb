#pragma once

#include <cmath>
#include <string>
#include <vector>

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

/// How validation scores its BLEU and chrF: train.bleu_tokenize for target language `tgt_lang`
/// ("" = data.tgt_lang).
ScoringOptions validation_scoring(const Config& config, const std::string& tgt_lang = "");

/// One validation corpus: its name in logs and metrics ("val", or "val.en-fr" in a run of
/// several pairs), the target language it translates into, and its pairs.
struct ValidationSet {
  std::string name;
  std::string tgt_lang;
  EncodedSplit split;
};

/// Validates `model` on `split`, whose target language is `tgt_lang` ("" = data.tgt_lang), under
/// train.precision (the model is left in eval() mode; the caller switches back).
ValidationResult validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                          const Config& config, const at::Device& device,
                          const std::string& tgt_lang = "");
inline ValidationResult validate(Seq2Seq& model, const Tokenizer& tokenizer,
                                 const ValidationSet& set, const Config& config,
                                 const at::Device& device) {
  return validate(model, tokenizer, set.split, config, device, set.tgt_lang);
}

/// Every set's result and their mean: loss, BLEU and chrF averaged over the sets (perplexity =
/// exp of the mean loss, seconds summed); what best checkpoints and early stopping read. One
/// set: its own result.
struct ValidationSummary {
  ValidationResult mean;
  std::vector<ValidationResult> each;  ///< one per set, in order
};
ValidationSummary validate_sets(Seq2Seq& model, const Tokenizer& tokenizer,
                                const std::vector<ValidationSet>& sets, const Config& config,
                                const at::Device& device);

}  // namespace nmt
