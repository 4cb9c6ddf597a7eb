#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>

#include "core/device.h"
#include "core/error.h"
#include "core/languages.h"
#include "core/precision.h"
#include "core/run_lock.h"
#include "data/mixing.h"
#include "model/quantize.h"
#include "train/auto_recipe.h"
#include "train/finetune.h"
#include "train/optimizer.h"
#include "train/resume.h"
#include "train/trainer_internal.h"

namespace nmt {
namespace fs = std::filesystem;

namespace {

/// The optimizer's class (Adam or AdamW) and parameter groups follow weight_decay and
/// weight_decay_on, and a saved state only loads into the same shape.
void check_optimizer_fits(const fs::path& checkpoint, const TrainConfig& was,
                          const TrainConfig& now) {
  if ((was.weight_decay > 0.0) != (now.weight_decay > 0.0) ||
      (now.weight_decay > 0.0 && was.weight_decay_on != now.weight_decay_on)) {
    std::ostringstream message;
    message << checkpoint.string() << " was trained with train.weight_decay = " << was.weight_decay
            << ", train.weight_decay_on = '" << choice_name(was.weight_decay_on) << "' (now "
            << now.weight_decay << ", '" << choice_name(now.weight_decay_on)
            << "'): its optimizer state fits only the same optimizer; use those values";
    throw Error(message.str());
  }
}

/// Throws the one error that says why the run in `last` cannot go on under `config`: a changed
/// model or data setting, an optimizer whose saved state would not fit, or another vocabulary.
void check_resumable(const fs::path& last, const LoadedModel& saved, const Config& config,
                     const Tokenizer& tokenizer, const fs::path& run_dir) {
  for (const char* section : {"model", "data"}) {
    const std::string difference = first_difference(saved.config, config, section);
    if (!difference.empty()) {
      throw Error(last.string() + " does not match the config: " + difference +
                  " (checkpoint vs now); resume with the run's own model and data settings "
                  "(only train.* and decode.* may change)");
    }
  }
  check_optimizer_fits(last, saved.config.train, config.train);
  if (saved.tokenizer.serialized() != tokenizer.serialized()) {
    throw Error(last.string() + ": its vocabulary differs from the tokenizer in " +
                run_dir.string() + " (was the tokenizer retrained?)");
  }
}

}  // namespace

Trainer::Trainer(Config config, bool resume, std::ostream& console, const fs::path& init_from,
                 const DistEnv& dist)
    : impl_(std::make_unique<Impl>(std::move(config), resume, console, init_from, dist)) {}

Trainer::~Trainer() = default;

TrainSummary Trainer::run(bool final_validation) { return impl_->run(final_validation); }

const Config& Trainer::config() const { return impl_->config(); }

namespace {

/// `config` with its "auto" keys sized (train/auto_recipe.h): a new run of one process.
Config auto_sized(Config config, bool resume, const fs::path& init_from, const DistEnv& dist) {
  if (config.auto_keys.empty()) return config;
  std::string keys;
  for (const auto& key : config.auto_keys) keys += (keys.empty() ? "" : ", ") + key;
  if (resume) throw Error("a resumed run's config.json holds values, not \"auto\": " + keys);
  if (dist.distributed()) {
    throw Error("\"auto\" (" + keys + ") is sized from a measurement of this host, which " +
                "ranks could make differently: size it once with nmt train --print-config and " +
                "start the ranks with that config");
  }
  if (!init_from.empty()) {
    for (const auto& key : config.auto_keys) {
      if (key.rfind("model.", 0) == 0 || key == "data.vocab_size") {
        throw Error("--init-from: " + key + " = \"auto\", but the shape and vocabulary " +
                    "are the parent's: give them as the parent has them (nmt inspect)");
      }
    }
  }
  resolve_auto(config);
  return config;
}

}  // namespace

Trainer::Impl::Impl(Config config, bool resume, std::ostream& console, const fs::path& init_from,
                    const DistEnv& dist)
    : config_(auto_sized(std::move(config), resume, init_from, dist)),
      run_dir_(config_.train.resolved_run_dir()),
      device_(rank_device(resolve_device(config_.train.device), dist)),
      window_(std::make_unique<TrainWindow>()),
      scheduler_(config_.train),
      keeper_(run_dir_, config_.train.keep_checkpoints,
              [this](const fs::path& path, bool with_optimizer) { save(path, with_optimizer); }),
      snapshots_(run_dir_, config_.train) {
  if (resume && !init_from.empty()) {
    throw Error("--init-from starts a new run from another one's weights, --resume continues " +
                run_dir_.string() + ": give one of them");
  }
  // Validation's BLEU tokenizer must work before the first step, not at the first validation
  // (ja-mecab without MeCab or its dictionary).
  if (config_.train.valid_bleu) {
    for (const auto& lang : target_languages(config_.data))
      validation_scoring(config_, lang).check();
  }
  if (dist.distributed()) {
    comm_ = std::make_unique<WorldComm>(dist, device_, config_.train.dist_timeout);
    check_same_on_all_ranks(*comm_,
                            {{"config fingerprint", fingerprint(config_to_json(config_).dump())},
                             {"--resume", resume ? 1 : 0}},
                            "config (--config, --set and --resume)");
  } else {
    comm_ = std::make_unique<WorldComm>();  // one process: no c10d
  }
  const int64_t threads =
      dist.distributed()
          ? rank_threads(dist, config_.train.threads, int64_t(std::thread::hardware_concurrency()))
          : config_.train.threads;
  if (device_.is_cpu()) configure_threads(threads);
  std::unique_ptr<Parent> parent;  // loaded before seeding: building its model draws numbers
  if (!init_from.empty()) parent = load_and_adopt_parent(init_from);
  torch::manual_seed(uint64_t(config_.train.seed));
  RunDirReport tidied;
  if (comm_->is_main()) {
    try {  // the other ranks wait for this; they learn why it failed instead of timing out
      tidied = prepare_run_dir(resume, console, parent.get());
    } catch (const std::exception& e) {
      comm_->publish("prepared", e.what());
      throw;
    }
    comm_->publish("prepared", "");
  } else {
    join_prepared_run();
  }
  config_.model.src_vocab_size = tokenizer_->src_vocab_size();
  config_.model.tgt_vocab_size = tokenizer_->tgt_vocab_size();
  config_.validate();
  if (device_.is_cpu()) {  // after validation: a bad value is reported before threads start
    packing_available();   // a bad NMT_PACKED_GEMM fails now, not at the first validation
    // auto: fp32 only; in bf16 two workers were no faster than oneDNN on all threads (README)
    const bool fp32 = resolve_precision(config_.train.precision, device_) == Precision::kFp32;
    const int64_t workers = config_.train.cpu_workers == 0 ? (fp32 ? at::get_num_threads() : 1)
                                                           : config_.train.cpu_workers;
    if (workers > 1) workers_ = std::make_unique<WorkerPool>(workers, threads);
  }
  load_data();
  set_up_model(resume, parent.get(), tidied.rewrite_best);
  const int64_t trained_on = state_.world_size;
  state_.world_size = comm_->size();
  if (comm_->is_main()) {
    if (resume && config_.train.keep_checkpoints > 0) keeper_.rotate(state_.step);
    if (!resume) {
      for (const auto& choice : config_.auto_choices) {
        log_->line("auto: " + choice.key + " = " + choice.value + ": " + choice.why);
      }
    }
    const std::string removed = snapshots_.start(state_.step, progress());
    if (!removed.empty()) log_->line(removed);
    log_->line("averaging: " + snapshots_.describe());
    if (ema_) {
      log_->line("moving average: decay " + fixed(config_.train.ema_decay, 4) +
                 " (train.ema_decay); validated, and the model of best.pt, step_N.pt and last.pt");
    }
    save_config(config_, run_dir_ / "config.json");
  }
  synchronise_ranks(resume ? trained_on : comm_->size());
  log_->line("start-up took " +
             fixed(std::chrono::duration<double>(Clock::now() - window_->constructed).count(), 2) +
             " s (run directory, tokenizer, data, model)");
  log_->line(describe_device(device_) +
             (workers_ ? ", " + std::to_string(workers_->size()) + " data-parallel workers" : "") +
             ", precision " + describe_precision(config_.train.precision, device_) + ", " +
             std::to_string(count_parameters(*model_)) + " parameters" +
             (comm_->size() > 1 ? ", " + std::to_string(comm_->size()) + " processes" : ""));
}

RunDirReport Trainer::Impl::prepare_run_dir(bool resume, std::ostream& console,
                                            const Parent* parent) {
  const fs::path last = run_dir_ / "last.pt";
  if (resume && !fs::exists(last)) {
    throw Error(run_dir_.string() + ": nothing to resume (no last.pt)");
  }
  fs::create_directories(run_dir_);
  lock_ = std::make_unique<RunDirLock>(run_dir_);  // one writer per run directory
  if (!resume && fs::exists(last)) {
    throw Error(run_dir_.string() + " already holds a run (last.pt): continue it with --resume " +
                "or choose another train.run_dir / train.name");
  }
  TrainingState recorded;  // a new run: nothing of an earlier attempt is kept
  recorded.step = -1;
  recorded.log_bytes = recorded.metrics_bytes = 0;
  if (resume) recorded = read_checkpoint_state(last);
  RunDirReport tidied = tidy_run_dir(run_dir_, recorded);
  log_ = std::make_unique<RunLog>(run_dir_, console);
  if (resume || !tidied.discarded.empty()) log_tidy_report(tidied, resume ? &recorded : nullptr);
  if (parent != nullptr) write_parent_files(*parent);
  tokenizer_.emplace(prepare_tokenizer(config_.data, run_dir_));
  if (const auto casing = tokenizer_->word_casing()) {
    log_->line("word casing of the training sources (" + std::string(kWordCasingFile) +
               "): " + casing->summary());
  }
  prepare_train_corpus();
  return tidied;
}

void Trainer::Impl::prepare_train_corpus() {
  if (resegments_each_epoch(config_.data)) return;  // load_data reads the text
  if (!comm_->is_main()) {
    train_ = open_encoded_corpus(config_.data, *tokenizer_, run_dir_);
    return;
  }
  EncodedCorpusReport report;
  train_ = prepare_encoded_corpus(config_.data, *tokenizer_, run_dir_, &report);
  const std::string size = fixed(double(report.bytes) / 1e6, 1) + " MB";
  const std::string seconds = fixed(report.seconds, 2) + " s";
  log_->line(report.built ? "encoded training corpus: wrote " + report.file.string() + " (" + size +
                                ", " + seconds + ") because " + report.reason
                          : "encoded training corpus: mapped " + report.file.string() + " (" +
                                size + ", checked in " + seconds + ")");
}

void Trainer::Impl::join_prepared_run() {
  const std::string failure =
      comm_->fetch("prepared", "start-up: waiting for rank 0 to prepare " + run_dir_.string());
  if (!failure.empty()) {
    throw Error(comm_->who() + ": rank 0 could not prepare the run: " + failure);
  }
  log_ = std::make_unique<RunLog>(quiet_);
  for (const auto& file : Tokenizer::model_files(config_.data, run_dir_)) {
    if (!fs::exists(file)) {
      throw Error(comm_->who() + ": " + file.string() +
                  ", the tokenizer rank 0 prepared, is not visible here: train.run_dir must be "
                  "on a file system that every rank shares (docs/distributed.md)");
    }
  }
  tokenizer_.emplace(prepare_tokenizer(config_.data, run_dir_));
  prepare_train_corpus();
}

void Trainer::Impl::synchronise_ranks(int64_t trained_on) {
  const int64_t world = comm_->size();
  if (world == 1 && trained_on == 1) return;
  broadcast_parameters(*comm_, model_->parameters());
  check_same_on_all_ranks(*comm_,
                          {{"parameter count", count_parameters(*model_)},
                           {"training pairs", int64_t(train_.stats.kept)},
                           {"training target pieces", train_.stats.tgt_tokens},
                           {"resumed step", state_.step},
                           {"data-parallel workers", workers_ ? workers_->size() : 1}},
                          "data, model and train.cpu_workers");
  if (trained_on == world) return;
  const int64_t accum = config_.train.accum_steps;
  log_->line("resume: last.pt was trained on " + std::to_string(trained_on) +
             " processes, this run has " + std::to_string(world) + ": a step now takes " +
             std::to_string(world) + " x accum_steps " + std::to_string(accum) + " = " +
             std::to_string(world * accum) + " batches (was " + std::to_string(trained_on * accum) +
             "); limits and schedules counted in steps keep counting steps, so each remaining "
             "step sees " +
             (world > trained_on ? "more" : "less") + " data than before");
}

std::unique_ptr<Parent> Trainer::Impl::load_and_adopt_parent(const fs::path& init_from) {
  const InitKeep keep = config_.train.init_keep;
  auto parent = std::make_unique<Parent>(load_parent(init_from, keep, device_));
  adopt_parent_config(*parent, config_);
  if (keep == InitKeep::kOptimizer) {
    check_optimizer_fits(parent->checkpoint, parent->loaded.config.train, config_.train);
  }
  return parent;
}

void Trainer::Impl::write_parent_files(const Parent& parent) {
  const InitKeep keep = config_.train.init_keep;
  adopt_parent_tokenizer(parent, config_.data, run_dir_);
  record_parent(parent, keep, run_dir_);
  log_->line(describe_parent(parent, keep));
}

void Trainer::Impl::check_data_size() const {
  if (config_.train.allow_small_data) return;
  const TrainConfig& t = config_.train;
  std::vector<std::string> few;
  if (train_.stats.kept < t.kMinTrainPairs) {
    few.push_back("the training data has " + std::to_string(train_.stats.kept) +
                  " sentence pairs (of " + std::to_string(train_.stats.read) +
                  " read), fewer than " + std::to_string(t.kMinTrainPairs));
  }
  for (const auto& valid : valids_) {
    if (valid.split.stats.kept < t.kMinValidPairs) {
      few.push_back("the validation set " + valid.name + " has " +
                    std::to_string(valid.split.stats.kept) + " pairs, fewer than " +
                    std::to_string(t.kMinValidPairs));
    }
  }
  if (few.empty()) return;
  std::string all;
  for (const auto& item : few) all += (all.empty() ? "" : "; and ") + item;
  throw Error(all +
              ": too little to train a useful model or to judge it (a translation model needs "
              "thousands of pairs; a validation BLEU of a few lines is noise). Add data, or train "
              "anyway with --set train.allow_small_data=true");
}

void Trainer::Impl::load_data() {
  if (resegments_each_epoch(config_.data)) {
    train_text_ = load_corpora(config_.data, config_.data.train, *tokenizer_);
    train_.stats = train_text_->stats;
    train_.parts = train_text_->parts;
  }
  const std::string shares = apply_sampling_temperature(config_.data, train_.parts);
  if (train_text_) train_text_->parts = train_.parts;
  // Here, not when the first epoch starts: an empty mix would leave the loop nothing to train.
  if (mixes(train_.parts)) check_mix_not_empty(train_.parts);
  const auto& corpora = config_.data.train;
  log_->line(describe_parts(corpora.size() == 1 ? corpora[0].name() : "train", train_.parts,
                            train_.stats));
  if (!shares.empty()) log_->line(shares);
  // One validation set per pair (data.valid entries, expanded to every pair in a multilingual
  // run), named by its pair there: "val.en-fr".
  const bool several = multilingual(config_.data);
  const auto name_of = [&](const CorpusSpec& corpus) {
    return several ? corpus.name() + "." + corpus_pair(config_.data, corpus).name() : corpus.name();
  };
  for (const auto& corpus : corpora_per_pair(config_.data, config_.data.valid)) {
    valids_.push_back({name_of(corpus), corpus_pair(config_.data, corpus).tgt,
                       load_corpus(config_.data, corpus, *tokenizer_)});
    log_->line(describe(valids_.back().name, valids_.back().split.stats));
  }
  check_data_size();
  for (const auto& corpus : corpora_per_pair(config_.data, config_.train.monitor_splits)) {
    monitors_.push_back({name_of(corpus), corpus_pair(config_.data, corpus).tgt,
                         load_corpus(config_.data, corpus, *tokenizer_)});
  }
}

void Trainer::Impl::set_up_model(bool resume, const Parent* parent, bool rewrite_best) {
  model_ = Seq2Seq(config_.model);
  model_->to(device_);
  optimizer_ = make_optimizer(model_->named_parameters(), config_.train);
  const auto copy_weights = [this](const std::vector<at::Tensor>& weights) {
    torch::NoGradGuard no_grad;
    const auto params = model_->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i]);
  };
  // The weights training goes on from: a checkpoint's model, or with train.ema_decay its training
  // weights (its model is their average).
  std::vector<at::Tensor> training;
  if (parent != nullptr) {
    copy_weights(parent->loaded.model->parameters());
    if (config_.train.init_keep == InitKeep::kOptimizer) {    // Adam's moments are the training
      load_optimizer_state(parent->checkpoint, *optimizer_);  // weights', not the average's
      training = load_training_weights(parent->checkpoint, model_->parameters());
    }
  }
  if (resume) {
    const fs::path last = run_dir_ / "last.pt";
    LoadedModel saved = load_checkpoint(last, device_);
    check_resumable(last, saved, config_, *tokenizer_, run_dir_);
    copy_weights(saved.model->parameters());
    load_optimizer_state(last, *optimizer_);
    training = load_training_weights(last, model_->parameters());
    state_ = saved.state;
    if (state_.rng_state.defined()) set_cpu_generator_state(state_.rng_state);
    set_accelerator_generator_state(device_, state_.accelerator_rng_state);
    log_->line("resumed " + last.string() + " at step " + std::to_string(state_.step) + ", epoch " +
               std::to_string(state_.epoch + 1) + ", batch " +
               std::to_string(state_.batch_in_epoch));
    // Killed between last.pt and best.pt: last.pt's model is best (before the training weights).
    if (rewrite_best && comm_->is_main()) {
      keeper_.save_best();
      log_->line("best.pt rewritten from last.pt (step " + std::to_string(state_.step) + ")");
    }
  }
  // Rank 0 alone validates and saves: the others keep no average. It starts at the model's
  // weights: the average a checkpoint holds, or the weights of a run without one.
  if (config_.train.ema_decay > 0.0 && comm_->is_main()) {
    ema_ = std::make_unique<WeightEma>(model_->parameters(), config_.train.ema_decay);
  }
  if (!training.empty()) copy_weights(training);
}

void Trainer::Impl::log_tidy_report(const RunDirReport& report, const TrainingState* last) {
  const auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
    return text.empty() ? std::string("nothing") : text;
  };
  if (last != nullptr) {
    log_->line("resume: found last.pt (step " + std::to_string(last->step) + ")" +
               (report.found.empty() ? "" : ", " + join(report.found)));
  }
  log_->line(std::string(last ? "resume" : "new run") + ": discarded " + join(report.discarded));
}

void Trainer::Impl::save(const fs::path& path, bool with_optimizer) {
  std::optional<EmaWeightsIn> average;  // validation has put it in already
  if (ema_ && !ema_->swapped_in()) average.emplace(ema_.get());
  write_checkpoint(path, with_optimizer,
                   ema_ && with_optimizer ? ema_->held() : std::vector<at::Tensor>{});
}

void Trainer::Impl::save_snapshot(const fs::path& path) {
  state_.epochs_done = epochs_done();  // places the snapshot in an epoch budget on resume
  write_checkpoint(path, /*with_optimizer=*/false, {});
}

void Trainer::Impl::write_checkpoint(const fs::path& path, bool with_optimizer,
                                     const std::vector<at::Tensor>& training_weights) {
  // The logs' sizes now: a resume from this checkpoint cuts them back to these (train/resume.h).
  state_.log_bytes = log_->log_bytes();
  state_.metrics_bytes = log_->metrics_bytes();
  state_.rng_state = cpu_generator_state();
  state_.accelerator_rng_state = accelerator_generator_state(device_);
  TrainingState state = state_;
  state.training_weights = training_weights;
  save_checkpoint(path, config_, model_, *tokenizer_, state,
                  with_optimizer ? optimizer_.get() : nullptr);
}

}  // namespace nmt
