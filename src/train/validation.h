#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "core/config.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "eval/metrics.h"
#include "model/seq2seq.h"

namespace nmt {

/// One value a validator measures: its key in metrics.jsonl ("loss", "bleu"), its label in the
/// log line ("loss", "BLEU") and the decimals shown there.
struct ScoreSpec {
  std::string key;
  std::string label;
  int digits = 2;
};

/// One validation's named values, in the order the validators gave them, and its wall-clock.
struct Scores {
  std::vector<std::pair<std::string, double>> values;
  double seconds = 0.0;

  /// The value of `key`; NaN when this validation did not measure it.
  double get(const std::string& key) const;
  double loss() const { return get("loss"); }  ///< nats per target token (no smoothing)
  double metric(Metric name) const { return get(choice_name(name)); }
};

/// True if `candidate` beats `best` for `metric` (NaN `best` = nothing yet).
bool improves(Metric metric, double candidate, double best);

/// How validation scores its BLEU and chrF: train.bleu_tokenize for target language `tgt_lang`
/// ("" = data.tgt_lang).
ScoringOptions validation_scoring(const Config& config, const std::string& tgt_lang = "");

/// One validation corpus: its name in logs and metrics ("val", or "val.en-fr" in a run of
/// several pairs), the target language it translates into, and its pairs.
struct ValidationSet {
  /// `scored_text` empty: the pairs' texts.
  ValidationSet(std::string set_name, std::string target_language, EncodedSplit pairs,
                ParallelText scored_text = {});

  std::string name;
  std::string tgt_lang;
  EncodedSplit split;  ///< the pairs training keeps (data.max_len): what the loss reads
  /// What BLEU and chrF translate and score: every pair with two non-empty sides, those longer
  /// than data.max_len pieces too, as `nmt evaluate` would score the corpus
  ParallelText scored;
};

/// `corpus` as a validation set: its pairs within data.max_len for the loss, all of them for
/// BLEU and chrF.
ValidationSet load_validation_set(const DataConfig& data, const CorpusSpec& corpus,
                                  const Tokenizer& tokenizer, std::string name);

/// What validators read: the model and one validation set, with the model's greedy
/// translations of the set's sources, decoded once for every validator that asks.
class ValidationPass {
 public:
  /// All references must outlive the pass.
  ValidationPass(Seq2Seq& model, const Tokenizer& tokenizer, const ValidationSet& set,
                 const Config& config, const at::Device& device, bool packed)
      : model_(model),
        tokenizer_(tokenizer),
        set_(set),
        config_(config),
        device_(device),
        packed_(packed) {}

  Seq2Seq& model() const { return model_; }
  const ValidationSet& set() const { return set_; }
  const Config& config() const { return config_; }
  const at::Device& device() const { return device_; }
  /// How BLEU and chrF score this set (validation_scoring).
  ScoringOptions scoring() const { return validation_scoring(config_, set_.tgt_lang); }
  /// Greedy translations of the set's sources, in order (validation BLEU is always greedy:
  /// fast and comparable, whatever decode.* asks for), each line translated as `nmt evaluate`
  /// translates it (text/document.h, whole_line_options); decoded on the first call.
  const std::vector<std::string>& hypotheses();

 private:
  Seq2Seq& model_;
  const Tokenizer& tokenizer_;
  const ValidationSet& set_;
  const Config& config_;
  const at::Device& device_;
  bool packed_;  ///< the weights are packed for decoding: one decoding worker per thread
  std::optional<std::vector<std::string>> hypotheses_;
};

/// One validation metric: the values it measures on a pass (a new metric is a new Validator
/// and one line in make_validators; the record and the log line follow from its specs).
class Validator {
 public:
  virtual ~Validator() = default;
  virtual std::vector<ScoreSpec> specs() const = 0;
  /// The values of specs(), in their order.
  virtual std::vector<double> measure(ValidationPass& pass) const = 0;
};

using Validators = std::vector<std::unique_ptr<Validator>>;

/// The validators train.* asks for: the teacher-forced loss and perplexity always, BLEU and
/// chrF of greedy translations with train.valid_bleu.
Validators make_validators(const TrainConfig& config);

/// Every validator's specs, in order.
std::vector<ScoreSpec> specs_of(const Validators& validators);

/// Validates `model` on `set` with `validators` under train.precision (the model is left in
/// eval() mode; the caller switches back).
Scores validate(Seq2Seq& model, const Tokenizer& tokenizer, const ValidationSet& set,
                const Config& config, const at::Device& device, const Validators& validators);
/// With make_validators(config.train), on `split` translating into `tgt_lang` ("" =
/// data.tgt_lang).
Scores validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                const Config& config, const at::Device& device, const std::string& tgt_lang = "");

/// Every set's scores and their mean: each value averaged over the sets, except perplexity,
/// exp of the mean loss (seconds summed); what best checkpoints and early stopping read. One
/// set: its own scores.
struct ValidationSummary {
  Scores mean;
  std::vector<Scores> each;  ///< one per set, in order
};
ValidationSummary validate_sets(Seq2Seq& model, const Tokenizer& tokenizer,
                                const std::vector<ValidationSet>& sets, const Config& config,
                                const at::Device& device, const Validators& validators);

}  // namespace nmt
