// The Trainer's training pairs, epoch by epoch (TrainingData in trainer_internal.h).
#include <algorithm>

#include "data/augment.h"
#include "data/mixing.h"
#include "train/trainer_internal.h"

namespace nmt {

void TrainingData::prepare() {
  const DataConfig& data = env_.config.data;
  if (resegments_each_epoch(data)) return;  // load reads the text
  if (!env_.comm->is_main()) {
    train_ = open_encoded_corpus(data, *env_.tokenizer, env_.dir);
    return;
  }
  EncodedCorpusReport report;
  train_ = prepare_encoded_corpus(data, *env_.tokenizer, env_.dir, &report);
  const std::string size = fixed(double(report.bytes) / 1e6, 1) + " MB";
  const std::string seconds = fixed(report.seconds, 2) + " s";
  env_.log->line(report.built ? "encoded training corpus: wrote " + report.file.string() + " (" +
                                    size + ", " + seconds + ") because " + report.reason
                              : "encoded training corpus: mapped " + report.file.string() + " (" +
                                    size + ", checked in " + seconds + ")");
}

void TrainingData::load() {
  const DataConfig& data = env_.config.data;
  if (resegments_each_epoch(data)) {
    text_ = load_corpora(data, data.train, *env_.tokenizer);
    train_.stats = text_->stats;
    train_.parts = text_->parts;
  }
  const std::string shares = apply_sampling_temperature(data, train_.parts);
  if (text_) text_->parts = train_.parts;
  // Here, not when the first epoch starts: an empty mix would leave the loop nothing to train.
  if (mixes(train_.parts)) check_mix_not_empty(train_.parts);
  env_.log->line(describe_parts(data.train.size() == 1 ? data.train[0].name() : "train",
                                train_.parts, train_.stats));
  if (!shares.empty()) env_.log->line(shares);
}

void TrainingData::begin_epoch(int64_t epoch) {
  if (resegments_each_epoch(env_.config.data)) resample(epoch);
  if (mixes(train_.parts)) remix(epoch);
}

PairsView TrainingData::pairs() const {
  const PairStore& store = resegments_each_epoch(env_.config.data) ? sampled_ : train_.pairs;
  return PairsView(store, mixes(train_.parts) ? &mixed_ : nullptr);
}

void TrainingData::remix(int64_t epoch) {
  mixed_ = epoch_mix(train_.parts, env_.config.data.seed, epoch);
  if (mix_described_) return;
  mix_described_ = true;
  const auto counts = mix_counts(train_.parts);
  std::string text;
  for (size_t p = 0; p < counts.size(); ++p) {
    text += (p == 0 ? "" : ", ") + train_.parts[p].name + " " + std::to_string(counts[p]) + " of " +
            std::to_string(train_.parts[p].size()) + " (weight " +
            fixed(train_.parts[p].weight, 2) + ")";
  }
  env_.log->say("corpus mix per epoch: " + text + "; " + std::to_string(mixed_.size()) +
                " pairs in all");
}

void TrainingData::resample(int64_t epoch) {
  const DataConfig& data = env_.config.data;
  const Tokenizer& tokenizer = *env_.tokenizer;
  const auto start = Clock::now();
  const bool first = sampled_.size() == 0;
  AugmentCounts augmented;
  sampled_ = PairStore::from_examples(
      epoch_examples(data, *text_, tokenizer, epoch, &augmented),
      id_bytes_for(std::max(tokenizer.src_vocab_size(), tokenizer.tgt_vocab_size())));
  if (data.augment.any()) env_.log->say(describe(augmented, epoch));
  if (!first || !samples_subwords(data)) return;
  int64_t tgt_tokens = 0;
  for (size_t i = 0; i < sampled_.size(); ++i) tgt_tokens += int64_t(sampled_.tgt_len(i));
  const double per_sentence =
      sampled_.size() == 0 ? 0.0 : double(tgt_tokens) / double(sampled_.size());
  const double best =
      train_.stats.kept == 0 ? 0.0 : double(train_.stats.tgt_tokens) / double(train_.stats.kept);
  env_.log->say("subword sampling (data.subword_alpha " + fixed(data.subword_alpha, 2) +
                ", subword_nbest " + std::to_string(data.subword_nbest) + "): epoch " +
                std::to_string(epoch + 1) + " re-segmented in " + fixed(RunClock::since(start), 2) +
                " s, " + fixed(per_sentence, 2) +
                " target pieces per sentence (best segmentation " + fixed(best, 2) + ")");
}

}  // namespace nmt
