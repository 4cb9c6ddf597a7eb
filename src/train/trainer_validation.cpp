// The Trainer's validation: its sets, measured by the run's validators (validation.h) and
// reported by one ValidationRecorder (RunValidation in trainer_internal.h).
#include "core/languages.h"
#include "train/trainer_internal.h"
#include "train/validation_recorder.h"

namespace nmt {

void RunValidation::load() {
  const DataConfig& data = env_.config.data;
  // One validation set per pair (data.valid entries, expanded to every pair in a multilingual
  // run), named by its pair there: "val.en-fr".
  const bool several = multilingual(data);
  const auto load = [&](const std::vector<CorpusSpec>& corpora, std::vector<ValidationSet>& sets,
                        bool log) {
    for (const auto& corpus : corpora_per_pair(data, corpora)) {
      const LanguagePair pair = corpus_pair(data, corpus);
      sets.push_back({several ? corpus.name() + "." + pair.name() : corpus.name(), pair.tgt,
                      load_corpus(data, corpus, *env_.tokenizer)});
      if (log) env_.log->line(describe(sets.back().name, sets.back().split.stats));
    }
  };
  load(data.valid, sets_, /*log=*/true);
  load(env_.config.train.monitor_splits, monitors_, /*log=*/false);
}

RunValidation::Report RunValidation::measure(Seq2Seq& model, bool monitors) const {
  const Config& config = env_.config;
  const Tokenizer& tokenizer = *env_.tokenizer;
  Report report{validate_sets(model, tokenizer, sets_, config, env_.device, validators_), {}};
  if (monitors) {
    for (const auto& set : monitors_) {
      report.monitors.push_back(validate(model, tokenizer, set, config, env_.device, validators_));
    }
  }
  return report;
}

void RunValidation::record(nlohmann::json record, const std::string& head, const Report& report,
                           const std::string& tail) const {
  // Several pairs: each validation set's own numbers too (the record's values and the best
  // checkpoint are their mean); then the monitor splits'.
  std::vector<ValidationRecorder::NamedScores> sets;
  if (sets_.size() > 1) {
    for (size_t i = 0; i < sets_.size(); ++i)
      sets.emplace_back(sets_[i].name, &report.summary.each[i]);
  }
  for (size_t i = 0; i < report.monitors.size(); ++i) {
    sets.emplace_back(monitors_[i].name, &report.monitors[i]);
  }
  const ValidationRecorder recorder(*env_.log, specs_of(validators_),
                                    choice_name(env_.config.train.metric));
  recorder.write(std::move(record), head, report.summary.mean, sets, tail);
}

}  // namespace nmt
