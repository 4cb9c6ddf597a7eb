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
      const std::string pair = corpus_pair(data, corpus).name();
      sets.push_back(load_validation_set(data, corpus, *env_.tokenizer,
                                         several ? corpus.name() + "." + pair : corpus.name()));
      const ValidationSet& set = sets.back();
      if (!log) continue;
      env_.log->line(describe(set.name, set.split.stats));
      if (set.split.stats.too_long > 0) {
        env_.log->line("  the loss reads the " + std::to_string(set.split.stats.kept) +
                       " pairs kept; BLEU and chrF translate all " +
                       std::to_string(set.scored.size()) + ", those too long in parts, as " +
                       "nmt evaluate translates them");
      }
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
