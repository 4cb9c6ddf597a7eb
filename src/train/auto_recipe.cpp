#include "train/auto_recipe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/error.h"
#include "core/languages.h"
#include "core/precision.h"
#include "core/utf8.h"
#include "data/batching.h"
#include "data/line_reader.h"
#include "data/pair_store.h"
#include "train/bench.h"
#include "train/flops.h"

namespace nmt {
namespace {

using A = AutoAnchor;

std::string number(double value, const char* format = "%.3g") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string thousands(double value) {
  std::string digits = std::to_string(int64_t(std::llround(value)));
  for (int i = int(digits.size()) - 3; i > 0 && digits[size_t(i - 1)] != '-'; i -= 3)
    digits.insert(size_t(i), ",");
  return digits;
}

/// Epochs as the reasons give them: two decimals from one epoch on, so that a value just under
/// a rule's cut (14 epochs) does not print as the cut; three digits below.
std::string epochs_text(double epochs) { return number(epochs, epochs >= 1.0 ? "%.2f" : "%.3g"); }

/// The pieces (eos included) of `pairs` sides of `bytes` UTF-8 bytes in all.
double estimated_pieces(int64_t bytes, int64_t pairs) {
  return double(bytes) / A::kBytesPerPiece + double(pairs);
}

/// `model` in the tuned shape: d_model 256, 4 heads, 3 + 3 layers, feed-forward 1,024.
ModelConfig anchor_shape(ModelConfig model) {
  model.d_model = 256, model.n_heads = 4, model.encoder_layers = 3, model.decoder_layers = 3;
  model.d_ff = 1024;
  return model;
}

/// The training budget in target pieces, and what bounds it.
struct Budget {
  double tokens = 0.0;  ///< target pieces (eos included) the run will train on
  double epochs = 0.0;  ///< tokens / the corpus's target pieces
  double steps = 0.0;   ///< tokens / the target pieces of a batch
  std::string by;       ///< "max_minutes 10 at about 5,200 target pieces/s"
};

/// What validating takes of a time budget, which counts it. Each validation decodes the
/// validation sets and the monitor splits, and costs as much as training on kValidationCost
/// times their target pieces; one comes after every epoch's target pieces (or every
/// train.validate_every steps of batches carrying `batch_pieces`), and train.validate_at_start
/// adds one before the first step.
struct Validating {
  double pieces = 0.0;    ///< one validation, in target pieces of training
  double share = 0.0;     ///< of the time after the first step
  double at_start = 0.0;  ///< the validation before the first step, in target pieces of training
};

Validating validating(const TrainConfig& train, const CorpusProfile& corpus, double epoch_pieces,
                      double batch_pieces) {
  Validating v;
  if (corpus.valid_pairs == 0) return v;
  const double cost = train.valid_bleu ? A::kValidationCost : A::kLossOnlyValidationCost;
  v.pieces = cost * estimated_pieces(corpus.valid_tgt_bytes, corpus.valid_pairs);
  const double between =
      train.validate_every > 0 ? double(train.validate_every) * batch_pieces : epoch_pieces;
  v.share = v.pieces / (between + v.pieces);
  if (train.validate_at_start) v.at_start = v.pieces;
  return v;
}

class Sizer {
 public:
  Sizer(Config& config, const CorpusProfile& corpus, const HostSpeed& host)
      : config_(config), corpus_(corpus), host_(host) {
    tgt_pieces_ = estimated_pieces(corpus.tgt_bytes, corpus.pairs);
  }

  bool wants(const std::string& key) const {
    const auto& keys = config_.auto_keys;
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }

  void choose(const std::string& key, const nlohmann::json& value, const std::string& why) {
    if (!wants(key)) return;
    config_.auto_choices.push_back({key, value.dump(), why});
  }

  /// Target pieces per second of a model of this shape and vocabulary on the corpus's mean pair.
  double pieces_per_second(const ModelConfig& shape, int64_t vocab) const {
    return host_.model_flops / flops_per_target_piece(shape, vocab, corpus_);
  }

  Budget budget(const ModelConfig& shape, int64_t vocab, int64_t batch_tokens) const {
    const TrainConfig& train = config_.train;
    const double batch_pieces = double(batch_tokens) * host_.target_share;
    Budget budget;
    budget.tokens = std::numeric_limits<double>::infinity();
    if (train.max_minutes > 0.0) {
      const double rate = pieces_per_second(shape, vocab);
      const Validating v = validating(train, corpus_, tgt_pieces_, batch_pieces);
      // At least a batch: a budget shorter than its first validation still trains a step.
      budget.tokens =
          std::max(batch_pieces, train.max_minutes * 60.0 * rate - v.at_start) * (1.0 - v.share);
      budget.by = "train.max_minutes " + number(train.max_minutes, "%g") + " at about " +
                  thousands(rate) + " target pieces/s";
      if (v.share > 0.0) budget.by += ", less " + number(100.0 * v.share, "%.1f") + "% validating";
      if (v.at_start > 0.0) budget.by += " and a validation before the first step";
    }
    if (train.max_steps > 0 && double(train.max_steps) * batch_pieces < budget.tokens) {
      budget.tokens = double(train.max_steps) * batch_pieces;
      budget.by = "train.max_steps " + std::to_string(train.max_steps);
    }
    if (train.max_epochs > 0 && double(train.max_epochs) * tgt_pieces_ < budget.tokens) {
      budget.tokens = double(train.max_epochs) * tgt_pieces_;
      budget.by = "train.max_epochs " + std::to_string(train.max_epochs);
    }
    budget.epochs = budget.tokens / tgt_pieces_;
    budget.steps = budget.tokens / batch_pieces;
    return budget;
  }

  std::string describe(const Budget& budget) const {
    return "about " + thousands(budget.tokens) + " target pieces (" + budget.by + "), " +
           epochs_text(budget.epochs) + " epochs of " + thousands(tgt_pieces_);
  }

  void size() {
    const TrainConfig& train = config_.train;
    if (train.max_steps <= 0 && train.max_minutes <= 0.0 && train.max_epochs <= 0) {
      throw Error(
          "\"auto\" sizes the recipe for a budget: set train.max_minutes, train.max_steps or "
          "train.max_epochs");
    }
    if (corpus_.pairs == 0) throw Error("\"auto\": the training corpus has no pairs");
    size_shape();
    size_vocabulary();
    size_normalization();
    size_regularisation();
    size_batches();
    size_schedule();
    config_.auto_keys.clear();
  }

 private:
  /// Width and depth: the tuned shape, or Transformer base (Vaswani et al. 2017) where the
  /// budget trains on 16 times the tuned hour's pieces and the corpus has 200,000+ pairs.
  void size_shape() {
    ModelConfig& model = config_.model;
    const Budget at_anchor = budget(anchor_shape(model), A::kVocab, A::kBatchTokens);
    const double tuned_hour = A::kTunedHourPieces;
    const bool big = at_anchor.tokens >= 16.0 * tuned_hour && corpus_.pairs >= 200000;
    const std::string why = std::string(big ? "Transformer base" : "the tuned shape") +
                            ": the budget trains on " + describe(at_anchor) +
                            ", and the corpus has " + thousands(double(corpus_.pairs)) +
                            " pairs (Transformer base takes 16x the tuned hour's " +
                            thousands(tuned_hour) + " and 200,000 pairs)";
    const int64_t d_model = big ? 512 : 256, layers = big ? 6 : 3, d_ff = big ? 2048 : 1024;
    if (wants("model.d_model")) model.d_model = d_model;
    if (wants("model.encoder_layers")) model.encoder_layers = layers;
    if (wants("model.decoder_layers")) model.decoder_layers = layers;
    if (wants("model.d_ff")) model.d_ff = d_ff;
    if (wants("model.n_heads")) model.n_heads = std::max<int64_t>(1, model.d_model / 64);
    choose("model.d_model", model.d_model, why);
    choose("model.encoder_layers", model.encoder_layers, why);
    choose("model.decoder_layers", model.decoder_layers, why);
    choose("model.d_ff", model.d_ff, why);
    choose("model.n_heads", model.n_heads, "d_model / 64 (heads of 64 dimensions)");
  }

  /// Vocabulary: the tuned 4,000 pieces scaled by the square root of the characters the run
  /// trains on (the corpus, or the part of it the budget reaches), at least the alphabet + 500.
  void size_vocabulary() {
    DataConfig& data = config_.data;
    if (!wants("data.vocab_size")) return;
    const Budget reach = budget(config_.model, A::kVocab, A::kBatchTokens);
    const double chars = double(corpus_.src_chars + corpus_.tgt_chars);
    const double seen = chars * std::min(1.0, reach.epochs);
    const int64_t scaled =
        std::llround(double(A::kVocab) * std::sqrt(seen / A::kChars) / 500.0) * 500;
    const int64_t clamped = std::clamp<int64_t>(scaled, 2000, 32000);
    const int64_t alphabet = data.joint_vocab
                                 ? corpus_.joint_alphabet
                                 : std::max(corpus_.src_alphabet, corpus_.tgt_alphabet);
    const int64_t floor = (alphabet + 500 + 499) / 500 * 500;  // alphabet + 500, up to 500s
    data.vocab_size = std::max(clamped, floor);
    std::string why =
        "4,000 x sqrt(" + thousands(seen) + " characters " +
        (reach.epochs < 1.0
             ? "the budget reaches, " + number(reach.epochs) + " of the corpus's epoch"
             : "of the corpus") +
        " / Multi30k's 3,819,194) = " + thousands(double(A::kVocab) * std::sqrt(seen / A::kChars)) +
        ", to 500s within [2,000, 32,000]";
    if (data.vocab_size > clamped) {
      why += ", raised to the " + thousands(double(alphabet)) + "-character alphabet + 500";
    }
    choose("data.vocab_size", data.vocab_size, why);
  }

  /// Normalisation: the tuned nmt_nfkc, or the text as written (identity) where at least 1 in
  /// 1,000 target characters is a full-width form that NFKC would make ASCII: Chinese and
  /// Japanese write "，" and "？", and their references keep them.
  void size_normalization() {
    if (!wants("data.normalization")) return;
    const bool keep = writes_fullwidth(corpus_.tgt_fullwidth, corpus_.tgt_chars);
    config_.data.normalization = keep ? Normalization::kIdentity : Normalization::kNmtNfkc;
    const std::string counted = thousands(double(corpus_.tgt_fullwidth)) + " of " +
                                thousands(double(corpus_.tgt_chars)) +
                                " target characters are full-width forms NFKC makes ASCII";
    choose("data.normalization", choice_name(config_.data.normalization),
           keep ? "the text as written: " + counted + " (at least 1 in 1,000)"
                : "nmt_nfkc (the tuned value): " + counted + " (under 1 in 1,000)");
  }

  /// Dropout and label smoothing from the epochs the budget allows: the tuned 0.15 and 0.2 at
  /// the tuned hour's 28 epochs. Fewer epochs, 0.1 less dropout per halving down to 0 (a run
  /// that sees each pair a few times does not overfit: on ja->en in 6 epochs, 0 beat 0.05, 0.1
  /// and 0.15 by 4.5, 6.1 and 10.1 BLEU); more, 0.05 more per doubling up to 0.3.
  void size_regularisation() {
    const Budget reach = budget(config_.model, config_.data.vocab_size, A::kBatchTokens);
    const double halvings = std::log2(reach.epochs / A::kEpochs);
    const double slope = halvings < 0.0 ? 0.1 : 0.05;
    const double raw = 0.15 + slope * halvings;
    const double dropout = std::clamp(double(std::lround(raw * 20.0)) / 20.0, 0.0, 0.3);
    const std::string epochs = epochs_text(reach.epochs) + " epochs (" + describe(reach) + ")";
    if (wants("model.dropout")) config_.model.dropout = dropout;
    choose("model.dropout", dropout,
           "0.15 + " + number(slope) + " x log2(" + epochs_text(reach.epochs) +
               " / 28 epochs) = " + number(raw) + ", to 0.05s within [0, 0.3]; " + epochs);
    const double smoothing = reach.epochs >= A::kEpochs / 2 ? 0.2 : 0.1;
    if (wants("train.label_smoothing")) config_.train.label_smoothing = smoothing;
    choose("train.label_smoothing", smoothing,
           std::string(smoothing > 0.1 ? "0.2 (the tuned value): at least " : "0.1: under ") +
               "14 epochs, half the tuned hour's 28; " + epochs);
  }

  /// Batches: the tuned 2,048 tokens, halved where the budget would give under 4,000 steps (more,
  /// smaller steps: on Multi30k 1,024 was level over the hour's 7,415 steps and ahead in 10
  /// minutes' 1,900), doubled (a GPU's long run) where it would give over 60,000.
  void size_batches() {
    if (!wants("data.batch_tokens")) return;
    const Budget reach = budget(config_.model, config_.data.vocab_size, A::kBatchTokens);
    int64_t batch = A::kBatchTokens;
    std::string why = "2,048 (the tuned value): ";
    if (config_.train.max_steps > 0 && reach.by.rfind("train.max_steps", 0) == 0) {
      why += "the budget is counted in steps";
    } else if (reach.steps < 4000) {
      batch = 1024, why = "1,024: under 4,000 steps of 2,048 tokens; ";
    } else if (reach.steps > 60000) {
      batch = 4096, why = "4,096: over 60,000 steps of 2,048 tokens; ";
    } else {
      why += "4,000 to 60,000 steps; ";
    }
    if (why.back() == ' ') why += "about " + thousands(reach.steps) + " steps of 2,048 tokens";
    config_.data.batch_tokens = batch;
    choose("data.batch_tokens", batch, why);
  }

  /// Peak learning rate: the tuned 1.5e-3 x (batch tokens / 2,048)^(1/4) x sqrt(256 / d_model).
  /// The fourth root, not the square root Adam's scaling rule gives: at batches of 1,024 in 10
  /// minutes the square root's 1.06e-3 scored 0.8 below 1.5e-3 on Multi30k and min->id, and
  /// 1.5e-3 stalled once on lzh->zh and, rerun, scored 2.5 below the fourth root's 1.26e-3.
  /// Warmup: 10% of the budget (the tuned 800 steps were 10.8% of the hour).
  void size_schedule() {
    const double lr = A::kLr * std::pow(double(config_.data.batch_tokens) / A::kBatchTokens, 0.25) *
                      std::sqrt(256.0 / double(config_.model.d_model));
    const double rounded = std::stod(number(lr));
    if (wants("train.lr")) config_.train.lr = rounded;
    choose("train.lr", rounded,
           "1.5e-3 x (data.batch_tokens " + std::to_string(config_.data.batch_tokens) +
               " / 2,048)^(1/4) x sqrt(256 / model.d_model " +
               std::to_string(config_.model.d_model) + ")");
    if (wants("train.warmup")) {
      config_.train.warmup = Warmup{0, 10.0};
      choose("train.warmup", "10%",
             "10% of the budget (the tuned 800 steps were 10.8% of the hour's 7,415; on Multi30k "
             "in 8 minutes the share reached 30.6 BLEU, 800 steps 28.9)");
    }
  }

  Config& config_;
  const CorpusProfile& corpus_;
  const HostSpeed& host_;
  double tgt_pieces_ = 0.0;
};

}  // namespace

CorpusProfile profile_corpus(const DataConfig& data, const std::vector<CorpusSpec>& monitors) {
  CorpusProfile profile;
  std::unordered_set<char32_t> src_alphabet, tgt_alphabet;
  std::string src, tgt;
  std::mt19937_64 draw(1);
  for (const auto& corpus : data.train) {
    PairReader reader(data, corpus);
    while (reader.next(src, tgt)) {
      ++profile.pairs;
      const std::pair<int32_t, int32_t> bytes{int32_t(src.size()), int32_t(tgt.size())};
      if (profile.sampled_bytes.size() < CorpusProfile::kSampled) {
        profile.sampled_bytes.push_back(bytes);
      } else if (const uint64_t slot = draw() % uint64_t(profile.pairs);
                 slot < CorpusProfile::kSampled) {
        profile.sampled_bytes[size_t(slot)] = bytes;  // each pair kept with kSampled / pairs
      }
      profile.src_bytes += int64_t(src.size());
      profile.tgt_bytes += int64_t(tgt.size());
      for (const char32_t c : utf8_decode(src)) src_alphabet.insert(c), ++profile.src_chars;
      for (const char32_t c : utf8_decode(tgt)) {
        tgt_alphabet.insert(c), ++profile.tgt_chars;
        profile.tgt_fullwidth += is_fullwidth_ascii(c);
      }
    }
  }
  for (const auto* validated : {&data.valid, &monitors}) {
    for (const auto& corpus : corpora_per_pair(data, *validated)) {
      PairReader reader(data, corpus);
      while (reader.next(src, tgt))
        ++profile.valid_pairs, profile.valid_tgt_bytes += int64_t(tgt.size());
    }
  }
  profile.src_alphabet = int64_t(src_alphabet.size());
  profile.tgt_alphabet = int64_t(tgt_alphabet.size());
  for (const char32_t c : tgt_alphabet) src_alphabet.insert(c);
  profile.joint_alphabet = int64_t(src_alphabet.size());
  return profile;
}

double flops_per_target_piece(const ModelConfig& shape, int64_t vocab,
                              const CorpusProfile& corpus) {
  ModelConfig model = shape;
  model.tgt_vocab_size = vocab;
  const double pairs = double(std::max<int64_t>(1, corpus.pairs));
  BatchShape pair;
  pair.rows = 1;
  pair.src_len =
      std::max<int64_t>(1, std::llround(estimated_pieces(corpus.src_bytes, corpus.pairs) / pairs));
  pair.tgt_len =
      std::max<int64_t>(1, std::llround(estimated_pieces(corpus.tgt_bytes, corpus.pairs) / pairs));
  pair.tgt_tokens = pair.tgt_len;
  return training_flops(model, pair) / double(pair.tgt_tokens);
}

HostSpeed measure_host_speed(const Config& config, const CorpusProfile& corpus,
                             size_t timed_batches) {
  // The sampled pairs as pieces of random ids, each side bytes / 3.7 pieces, over data.max_len
  // left out as training leaves them out.
  const int64_t longest = std::min(config.data.max_len, config.model.max_len - 2);
  std::mt19937_64 ids_from(1);
  std::uniform_int_distribution<int64_t> piece(4, A::kVocab - 1);  // past pad, unk, bos, eos
  const auto pieces_of = [&](int32_t bytes) {
    std::vector<int64_t> ids(size_t(std::max<int64_t>(1, std::llround(bytes / A::kBytesPerPiece))));
    for (auto& id : ids) id = piece(ids_from);
    return ids;
  };
  std::vector<Example> examples;
  for (const auto& [src_bytes, tgt_bytes] : corpus.sampled_bytes) {
    Example example{pieces_of(src_bytes), pieces_of(tgt_bytes)};
    if (int64_t(example.src.size()) > longest || int64_t(example.tgt.size()) > longest) continue;
    examples.push_back(std::move(example));
  }
  if (examples.empty()) {
    throw Error("\"auto\": the training corpus has no pairs of at most data.max_len " +
                std::to_string(config.data.max_len) + " pieces");
  }
  // Batched as training batches: what a batch of 2,048 tokens carries of targets.
  const PairStore store = PairStore::from_examples(examples);
  BatchingOptions options = batching_options(config.data);
  options.batch_tokens = A::kBatchTokens;
  const auto batches = make_batches(PairsView(store), options, /*epoch=*/0);
  int64_t targets = 0;
  for (const auto& batch : batches)
    for (const size_t i : batch) targets += int64_t(store.tgt_len(i)) + 1;  // + eos
  HostSpeed speed;
  speed.target_share = double(targets) / double(batches.size() * size_t(A::kBatchTokens));
  // The first of them (the order is shuffled), timed in the tuned shape and the run's precision.
  std::vector<Batch> timed;
  for (size_t b = 0; b < std::min(timed_batches, batches.size()); ++b)
    timed.push_back(collate(examples, batches[b]));
  ModelConfig shape = anchor_shape(config.model);
  shape.src_vocab_size = shape.tgt_vocab_size = A::kVocab;
  const at::Device device = resolve_device(config.train.device);
  // On the threads training will use: a process starts on one (the trainer sets them later).
  const int64_t threads = device.is_cpu() ? configure_threads(config.train.threads) : 0;
  const StepProbe probe = probe_training_steps(shape, config.train, timed);
  const double rate = double(probe.tgt_tokens) / probe.seconds;
  speed.model_flops = rate * flops_per_target_piece(shape, A::kVocab, corpus);
  speed.how = "measured: " + thousands(rate) + " target pieces/s (" +
              number(probe.flops / probe.seconds / 1e9, "%.0f") +
              " GFLOP/s of padded batches) in " + std::to_string(timed.size()) +
              " training steps of the tuned shape, " +
              describe_precision(config.train.precision, device) + " on " +
              describe_device(device) + ", on batches of 2,048 tokens shaped like the corpus's (" +
              number(speed.target_share, "%.2f") + " target pieces per token)";
  // Another process's work slows the steps the rules size from (docs/own_data.md).
  if (probe.others_share >= A::kBusyHost) {
    const std::string share = number(100.0 * probe.others_share, "%.0f") +
                              "% of the processor time its " + std::to_string(threads) +
                              " thread(s) could have had";
    speed.how += "; other processes took " + share +
                 ": the speed, and the epochs sized from it, are likely low";
    speed.warning = "warning: while \"auto\" timed training steps, other processes took " + share +
                    ": the speed it measured (" + thousands(rate) +
                    " target pieces/s), and the epochs it sized the recipe for, are likely low. "
                    "Start a budgeted run on a quiet host, or give the keys it chose with --set";
  }
  return speed;
}

void size_recipe(Config& config, const CorpusProfile& corpus, const HostSpeed& host) {
  if (config.auto_keys.empty()) return;
  Sizer(config, corpus, host).size();
}

void resolve_auto(Config& config) {
  if (config.auto_keys.empty()) return;
  const CorpusProfile corpus = profile_corpus(config.data, config.train.monitor_splits);
  const HostSpeed host = measure_host_speed(config, corpus);
  if (!host.warning.empty()) config.auto_warnings.push_back(host.warning);
  size_recipe(config, corpus, host);
  config.auto_choices.push_back(
      {"corpus", nlohmann::json(thousands(double(corpus.pairs)) + " pairs").dump(),
       thousands(double(corpus.src_chars)) + " source and " + thousands(double(corpus.tgt_chars)) +
           " target characters (" + thousands(double(corpus.src_bytes + corpus.tgt_bytes)) +
           " bytes), alphabets of " + thousands(double(corpus.src_alphabet)) + " and " +
           thousands(double(corpus.tgt_alphabet)) + " characters (" +
           thousands(double(corpus.joint_alphabet)) + " together)"});
  config.auto_choices.push_back(
      {"host", nlohmann::json(number(host.model_flops / 1e9, "%.0f") + " GFLOP/s").dump(),
       host.how});
  config.validate();
}

}  // namespace nmt
