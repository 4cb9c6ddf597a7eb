#include "train/validation.h"

#include <chrono>
#include <limits>
#include <utility>

#include "core/error.h"
#include "core/languages.h"
#include "core/precision.h"
#include "decode/evaluation.h"
#include "decode/translator.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "model/quantize.h"
#include "text/document.h"

namespace nmt {

double Scores::get(const std::string& key) const {
  for (const auto& [name, value] : values) {
    if (name == key) return value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool improves(Metric metric, double candidate, double best) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(best)) return true;
  return metric == Metric::kBleu ? candidate > best : candidate < best;
}

ScoringOptions validation_scoring(const Config& config, const std::string& tgt_lang) {
  ScoringOptions scoring;
  scoring.tokenize = config.train.bleu_tokenize;
  scoring.target_language = tgt_lang.empty() ? config.data.tgt_lang : tgt_lang;
  scoring.ter = false;  // the logs and the best checkpoint use BLEU and chrF only
  return scoring;
}

ValidationSet::ValidationSet(std::string set_name, std::string target_language, EncodedSplit pairs,
                             ParallelText scored_text)
    : name(std::move(set_name)),
      tgt_lang(std::move(target_language)),
      split(std::move(pairs)),
      scored(std::move(scored_text)) {
  if (scored.size() == 0) scored = {split.src_text, split.tgt_text};
}

ValidationSet load_validation_set(const DataConfig& data, const CorpusSpec& corpus,
                                  const Tokenizer& tokenizer, std::string name) {
  EncodedSplit every = load_corpus(data, corpus, tokenizer, /*filter_long=*/false);
  return {std::move(name),
          corpus_pair(data, corpus).tgt,
          load_corpus(data, corpus, tokenizer),
          {std::move(every.src_text), std::move(every.tgt_text)}};
}

const std::vector<std::string>& ValidationPass::hypotheses() {
  if (hypotheses_) return *hypotheses_;
  DecodeConfig greedy = config_.decode.plain_search(1);
  greedy.max_len_offset = config_.train.valid_max_len_offset;
  Translator translator(model_, tokenizer_, greedy, device_);
  translator.set_log(nullptr);
  if (packed_) translator.set_workers(at::get_num_threads());
  translator.set_language(LanguageTags(config_.data, tokenizer_), set_.tgt_lang);
  // Each line as `nmt evaluate` translates it: one longer than data.max_len source pieces is
  // split and its parts' translations joined, not cut at the model's positions.
  const TextOptions whole_lines =
      whole_line_options(config_.data.src_lang, set_.tgt_lang,
                         segment_limit(translator.models(), config_.data.max_len,
                                       translator.language_tags().on_source()));
  hypotheses_.emplace();
  for (const auto& result : translate_text(translator, set_.scored.src, whole_lines, 1,
                                           std::numeric_limits<size_t>::max())) {
    if (!result.ok()) throw Error(*result.error);
    hypotheses_->push_back(result.best());
  }
  return *hypotheses_;
}

namespace {

/// Teacher-forced loss (nats per target token, no smoothing) and its perplexity.
class LossValidator : public Validator {
 public:
  std::vector<ScoreSpec> specs() const override { return {{"loss", "loss", 4}, {"ppl", "ppl", 2}}; }
  std::vector<double> measure(ValidationPass& pass) const override {
    const double loss = teacher_forced_loss(pass.model(), pass.set().split.examples,
                                            pass.config().decode.batch_tokens, pass.device())
                            .loss();
    return {loss, std::exp(loss)};
  }
};

/// A corpus score of the greedy translations against the references, as `score` computes it.
class TranslationScoreValidator : public Validator {
 public:
  using ScoreFn = double (*)(const std::vector<std::string>& hypotheses,
                             const std::vector<std::string>& references,
                             const ScoringOptions& scoring);
  TranslationScoreValidator(ScoreSpec spec, ScoreFn score)
      : spec_(std::move(spec)), score_(score) {}
  std::vector<ScoreSpec> specs() const override { return {spec_}; }
  std::vector<double> measure(ValidationPass& pass) const override {
    return {score_(pass.hypotheses(), pass.set().scored.tgt, pass.scoring())};
  }

 private:
  ScoreSpec spec_;
  ScoreFn score_;
};

/// Corpus BLEU (sacreBLEU, train.bleu_tokenize).
double bleu_score(const std::vector<std::string>& hypotheses,
                  const std::vector<std::string>& references, const ScoringOptions& scoring) {
  return corpus_bleu(hypotheses, references, scoring.lowercase, scoring.bleu_tokenizer()).score;
}

/// Corpus chrF2.
double chrf_score(const std::vector<std::string>& hypotheses,
                  const std::vector<std::string>& references, const ScoringOptions& scoring) {
  return corpus_chrf(hypotheses, references, scoring.lowercase, scoring.chrf_word_order).score;
}

}  // namespace

Validators make_validators(const TrainConfig& config) {
  Validators validators;
  validators.push_back(std::make_unique<LossValidator>());
  if (config.valid_bleu) {
    validators.push_back(
        std::make_unique<TranslationScoreValidator>(ScoreSpec{"bleu", "BLEU", 2}, bleu_score));
    validators.push_back(
        std::make_unique<TranslationScoreValidator>(ScoreSpec{"chrf", "chrF", 2}, chrf_score));
  }
  return validators;
}

std::vector<ScoreSpec> specs_of(const Validators& validators) {
  std::vector<ScoreSpec> specs;
  for (const auto& validator : validators) {
    for (auto& spec : validator->specs()) specs.push_back(std::move(spec));
  }
  return specs;
}

Scores validate(Seq2Seq& model, const Tokenizer& tokenizer, const ValidationSet& set,
                const Config& config, const at::Device& device, const Validators& validators) {
  const auto start = std::chrono::steady_clock::now();
  model->eval();
  // In the training precision: bf16 greedy decoding is faster than fp32 on CPU, and it scores
  // the model as it is trained (search keeps its log-probabilities in float32).
  AutocastGuard autocast(config.train.precision, device);
  // In float32 on a CPU, the weights packed for decoding until this validation ends
  // (model/quantize.h; the next training step computes with the updated weights again), and
  // one single-threaded decoding worker per thread, as nmt translate decodes.
  const PackedWhileDecoding packed(model,
                                   device.is_cpu() && !InheritedAutocast::State::current().cpu);
  ValidationPass pass(model, tokenizer, set, config, device, packed.packed());
  Scores scores;
  for (const auto& validator : validators) {
    const auto specs = validator->specs();
    const auto values = validator->measure(pass);
    TORCH_CHECK(values.size() == specs.size(), "a validator gave ", values.size(), " values for ",
                specs.size(), " specs");
    for (size_t i = 0; i < specs.size(); ++i) scores.values.emplace_back(specs[i].key, values[i]);
  }
  scores.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return scores;
}

Scores validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                const Config& config, const at::Device& device, const std::string& tgt_lang) {
  const ValidationSet set{"val", tgt_lang.empty() ? config.data.tgt_lang : tgt_lang, split};
  return validate(model, tokenizer, set, config, device, make_validators(config.train));
}

ValidationSummary validate_sets(Seq2Seq& model, const Tokenizer& tokenizer,
                                const std::vector<ValidationSet>& sets, const Config& config,
                                const at::Device& device, const Validators& validators) {
  ValidationSummary summary;
  for (const auto& set : sets) {
    summary.each.push_back(validate(model, tokenizer, set, config, device, validators));
  }
  if (summary.each.size() == 1) {
    summary.mean = summary.each.front();
    return summary;
  }
  Scores& mean = summary.mean;
  const auto n = static_cast<double>(summary.each.size());
  for (const auto& [key, value] : summary.each.front().values) mean.values.emplace_back(key, 0.0);
  for (const auto& one : summary.each) {
    for (auto& [key, sum] : mean.values) sum += one.get(key) / n;  // NaN stays NaN
    mean.seconds += one.seconds;
  }
  // Perplexity is not a mean: that of the mean loss.
  for (auto& [key, value] : mean.values) {
    if (key == "ppl") value = std::exp(mean.loss());
  }
  return summary;
}

}  // namespace nmt
