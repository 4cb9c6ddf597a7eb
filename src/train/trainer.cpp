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

RunEnv::RunEnv(Config run_config, const DistEnv& dist)
    : config(std::move(run_config)),
      dir(config.train.resolved_run_dir()),
      device(rank_device(resolve_device(config.train.device), dist)),
      processes_on_host(dist.local_world_size) {}

Trainer::Impl::Impl(Config config, bool resume, std::ostream& console, const fs::path& init_from,
                    const DistEnv& dist)
    : env_(auto_sized(std::move(config), resume, init_from, dist), dist),
      data_(env_),
      validation_(env_),
      step_(env_),
      scheduler_(env_.config.train),
      keeper_(env_.dir, env_.config.train.keep_checkpoints,
              [this](const fs::path& path, bool with_optimizer) { save(path, with_optimizer); }),
      snapshots_(env_.dir, env_.config.train) {
  if (resume && !init_from.empty()) {
    throw Error("--init-from starts a new run from another one's weights, --resume continues " +
                env_.dir.string() + ": give one of them");
  }
  // Validation's BLEU tokenizer must work before the first step, not at the first validation
  // (ja-mecab without MeCab or its dictionary).
  if (env_.config.train.valid_bleu) {
    for (const auto& lang : target_languages(env_.config.data))
      validation_scoring(env_.config, lang).check();
  }
  if (dist.distributed()) {
    env_.comm = std::make_unique<WorldComm>(dist, env_.device, env_.config.train.dist_timeout);
    check_same_on_all_ranks(
        *env_.comm,
        {{"config fingerprint", fingerprint(config_to_json(env_.config).dump())},
         {"--resume", resume ? 1 : 0}},
        "config (--config, --set and --resume)");
  } else {
    env_.comm = std::make_unique<WorldComm>();  // one process: no c10d
  }
  const int64_t threads = dist.distributed()
                              ? rank_threads(dist, env_.config.train.threads,
                                             int64_t(std::thread::hardware_concurrency()))
                              : env_.config.train.threads;
  if (env_.device.is_cpu()) configure_threads(threads);
  std::unique_ptr<Parent> parent;  // loaded before seeding: building its model draws numbers
  if (!init_from.empty()) parent = load_and_adopt_parent(init_from);
  torch::manual_seed(uint64_t(env_.config.train.seed));
  RunDirReport tidied;
  if (env_.comm->is_main()) {
    try {  // the other ranks wait for this; they learn why it failed instead of timing out
      tidied = prepare_run_dir(resume, console, parent.get());
    } catch (const std::exception& e) {
      env_.comm->publish("prepared", e.what());
      throw;
    }
    env_.comm->publish("prepared", "");
  } else {
    join_prepared_run();
  }
  env_.config.model.src_vocab_size = env_.tokenizer->src_vocab_size();
  env_.config.model.tgt_vocab_size = env_.tokenizer->tgt_vocab_size();
  env_.config.validate();
  if (env_.device.is_cpu()) {  // after validation: a bad value is reported before threads start
    packing_available();       // a bad NMT_PACKED_GEMM fails now, not at the first validation
    // auto: fp32 only; in bf16 two workers were no faster than oneDNN on all threads (README)
    const bool fp32 =
        resolve_precision(env_.config.train.precision, env_.device) == Precision::kFp32;
    const int64_t workers = env_.config.train.cpu_workers == 0 ? (fp32 ? at::get_num_threads() : 1)
                                                               : env_.config.train.cpu_workers;
    if (workers > 1) step_.workers = std::make_unique<WorkerPool>(workers, threads);
  }
  data_.load();
  validation_.load();
  check_data_size();
  set_up_model(resume, parent.get(), tidied.rewrite_best);
  const int64_t trained_on = state_.world_size;
  state_.world_size = env_.comm->size();
  if (env_.comm->is_main()) {
    if (resume && env_.config.train.keep_checkpoints > 0) keeper_.rotate(state_.step);
    if (!resume) {
      for (const auto& choice : env_.config.auto_choices) {
        env_.log->line("auto: " + choice.key + " = " + choice.value + ": " + choice.why);
      }
      for (const auto& warning : env_.config.auto_warnings) env_.log->line(warning);
    }
    const std::string removed = snapshots_.start(state_.step, progress());
    if (!removed.empty()) env_.log->line(removed);
    env_.log->line("averaging: " + snapshots_.describe());
    if (step_.ema) {
      env_.log->line(
          "moving average: decay " + fixed(env_.config.train.ema_decay, 4) +
          " (train.ema_decay); validated, and the model of best.pt, step_N.pt and last.pt");
    }
    save_config(env_.config, env_.dir / "config.json");
  }
  synchronise_ranks(resume ? trained_on : env_.comm->size());
  env_.log->line(
      "start-up took " +
      fixed(std::chrono::duration<double>(Clock::now() - clock_.constructed).count(), 2) +
      " s (run directory, tokenizer, data, model)");
  env_.log->line(
      describe_device(env_.device) +
      (step_.workers ? ", " + std::to_string(step_.workers->size()) + " data-parallel workers"
                     : "") +
      ", precision " + describe_precision(env_.config.train.precision, env_.device) + ", " +
      std::to_string(count_parameters(*step_.model)) + " parameters" +
      (env_.comm->size() > 1 ? ", " + std::to_string(env_.comm->size()) + " processes" : ""));
}

RunDirReport Trainer::Impl::prepare_run_dir(bool resume, std::ostream& console,
                                            const Parent* parent) {
  const fs::path last = env_.dir / "last.pt";
  if (resume && !fs::exists(last)) {
    throw Error(env_.dir.string() + ": nothing to resume (no last.pt)");
  }
  fs::create_directories(env_.dir);
  env_.lock = std::make_unique<RunDirLock>(env_.dir);  // one writer per run directory
  if (!resume && fs::exists(last)) {
    throw Error(env_.dir.string() + " already holds a run (last.pt): continue it with --resume " +
                "or choose another train.run_dir / train.name");
  }
  TrainingState recorded;  // a new run: nothing of an earlier attempt is kept
  recorded.step = -1;
  recorded.log_bytes = recorded.metrics_bytes = 0;
  if (resume) recorded = read_checkpoint_state(last);
  RunDirReport tidied = tidy_run_dir(env_.dir, recorded);
  env_.log = std::make_unique<RunLog>(env_.dir, console);
  if (resume || !tidied.discarded.empty()) log_tidy_report(tidied, resume ? &recorded : nullptr);
  if (parent != nullptr) write_parent_files(*parent);
  TokenizerReport tokenizer_report;
  env_.tokenizer.emplace(prepare_tokenizer(env_.config.data, env_.dir, nullptr, &tokenizer_report));
  const std::string warning = normalization_warning(env_.config.data, tokenizer_report);
  if (!warning.empty()) env_.log->line(warning);
  if (const auto casing = env_.tokenizer->word_casing()) {
    env_.log->line("word casing of the training sources (" + std::string(kWordCasingFile) +
                   "): " + casing->summary());
  }
  data_.prepare();
  return tidied;
}

void Trainer::Impl::join_prepared_run() {
  const std::string failure =
      env_.comm->fetch("prepared", "start-up: waiting for rank 0 to prepare " + env_.dir.string());
  if (!failure.empty()) {
    throw Error(env_.comm->who() + ": rank 0 could not prepare the run: " + failure);
  }
  env_.log = std::make_unique<RunLog>(env_.quiet);
  for (const auto& file : Tokenizer::model_files(env_.config.data, env_.dir)) {
    if (!fs::exists(file)) {
      throw Error(env_.comm->who() + ": " + file.string() +
                  ", the tokenizer rank 0 prepared, is not visible here: train.run_dir must be "
                  "on a file system that every rank shares (docs/distributed.md)");
    }
  }
  env_.tokenizer.emplace(prepare_tokenizer(env_.config.data, env_.dir));
  data_.prepare();
}

void Trainer::Impl::synchronise_ranks(int64_t trained_on) {
  const int64_t world = env_.comm->size();
  if (world == 1 && trained_on == 1) return;
  broadcast_parameters(*env_.comm, step_.model->parameters());
  check_same_on_all_ranks(*env_.comm,
                          {{"parameter count", count_parameters(*step_.model)},
                           {"training pairs", int64_t(data_.stats().kept)},
                           {"training target pieces", data_.stats().tgt_tokens},
                           {"resumed step", state_.step},
                           {"data-parallel workers", step_.workers ? step_.workers->size() : 1}},
                          "data, model and train.cpu_workers");
  if (trained_on == world) return;
  const int64_t accum = env_.config.train.accum_steps;
  env_.log->line("resume: last.pt was trained on " + std::to_string(trained_on) +
                 " processes, this run has " + std::to_string(world) + ": a step now takes " +
                 std::to_string(world) + " x accum_steps " + std::to_string(accum) + " = " +
                 std::to_string(world * accum) + " batches (was " +
                 std::to_string(trained_on * accum) +
                 "); limits and schedules counted in steps keep counting steps, so each remaining "
                 "step sees " +
                 (world > trained_on ? "more" : "less") + " data than before");
}

std::unique_ptr<Parent> Trainer::Impl::load_and_adopt_parent(const fs::path& init_from) {
  const InitKeep keep = env_.config.train.init_keep;
  auto parent = std::make_unique<Parent>(load_parent(init_from, keep, env_.device));
  adopt_parent_config(*parent, env_.config);
  if (keep == InitKeep::kOptimizer) {
    check_optimizer_fits(parent->checkpoint, parent->loaded.config.train, env_.config.train);
  }
  return parent;
}

void Trainer::Impl::write_parent_files(const Parent& parent) {
  const InitKeep keep = env_.config.train.init_keep;
  adopt_parent_tokenizer(parent, env_.config.data, env_.dir);
  record_parent(parent, keep, env_.dir);
  env_.log->line(describe_parent(parent, keep));
}

void Trainer::Impl::check_data_size() const {
  if (env_.config.train.allow_small_data) return;
  const TrainConfig& t = env_.config.train;
  std::vector<std::string> few;
  if (data_.stats().kept < t.kMinTrainPairs) {
    few.push_back("the training data has " + std::to_string(data_.stats().kept) +
                  " sentence pairs (of " + std::to_string(data_.stats().read) +
                  " read), fewer than " + std::to_string(t.kMinTrainPairs));
  }
  for (const auto& valid : validation_.sets()) {
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

void Trainer::Impl::set_up_model(bool resume, const Parent* parent, bool rewrite_best) {
  step_.model = Seq2Seq(env_.config.model);
  step_.model->to(env_.device);
  step_.optimizer = make_optimizer(step_.model->named_parameters(), env_.config.train);
  const auto copy_weights = [this](const std::vector<at::Tensor>& weights) {
    torch::NoGradGuard no_grad;
    const auto params = step_.model->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i]);
  };
  // The weights training goes on from: a checkpoint's model, or with train.ema_decay its training
  // weights (its model is their average).
  std::vector<at::Tensor> training;
  if (parent != nullptr) {
    copy_weights(parent->loaded.model->parameters());
    if (env_.config.train.init_keep == InitKeep::kOptimizer) {  // Adam's moments are the training
      load_optimizer_state(parent->checkpoint, *step_.optimizer);  // weights', not the average's
      training = load_training_weights(parent->checkpoint, step_.model->parameters());
    }
  }
  if (resume) {
    const fs::path last = env_.dir / "last.pt";
    LoadedModel saved = load_checkpoint(last, env_.device);
    check_resumable(last, saved, env_.config, *env_.tokenizer, env_.dir);
    copy_weights(saved.model->parameters());
    load_optimizer_state(last, *step_.optimizer);
    training = load_training_weights(last, step_.model->parameters());
    state_ = saved.state;
    if (state_.rng_state.defined()) set_cpu_generator_state(state_.rng_state);
    set_accelerator_generator_state(env_.device, state_.accelerator_rng_state);
    env_.log->line("resumed " + last.string() + " at step " + std::to_string(state_.step) +
                   ", epoch " + std::to_string(state_.epoch + 1) + ", batch " +
                   std::to_string(state_.batch_in_epoch));
    // Killed between last.pt and best.pt: last.pt's model is best (before the training weights).
    if (rewrite_best && env_.comm->is_main()) {
      keeper_.save_best();
      env_.log->line("best.pt rewritten from last.pt (step " + std::to_string(state_.step) + ")");
    }
  }
  // Rank 0 alone validates and saves: the others keep no average. It starts at the model's
  // weights: the average a checkpoint holds, or the weights of a run without one.
  if (env_.config.train.ema_decay > 0.0 && env_.comm->is_main()) {
    step_.ema = std::make_unique<WeightEma>(step_.model->parameters(), env_.config.train.ema_decay);
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
    env_.log->line("resume: found last.pt (step " + std::to_string(last->step) + ")" +
                   (report.found.empty() ? "" : ", " + join(report.found)));
  }
  env_.log->line(std::string(last ? "resume" : "new run") + ": discarded " +
                 join(report.discarded));
}

void Trainer::Impl::save(const fs::path& path, bool with_optimizer) {
  std::optional<EmaWeightsIn> average;  // validation has put it in already
  if (step_.ema && !step_.ema->swapped_in()) average.emplace(step_.ema.get());
  write_checkpoint(path, with_optimizer,
                   step_.ema && with_optimizer ? step_.ema->held() : std::vector<at::Tensor>{});
}

void Trainer::Impl::save_snapshot(const fs::path& path) {
  state_.epochs_done = epochs_done();  // places the snapshot in an epoch budget on resume
  write_checkpoint(path, /*with_optimizer=*/false, {});
}

void Trainer::Impl::write_checkpoint(const fs::path& path, bool with_optimizer,
                                     const std::vector<at::Tensor>& training_weights) {
  // The logs' sizes now: a resume from this checkpoint cuts them back to these (train/resume.h).
  state_.log_bytes = env_.log->log_bytes();
  state_.metrics_bytes = env_.log->metrics_bytes();
  state_.rng_state = cpu_generator_state();
  state_.accelerator_rng_state = accelerator_generator_state(env_.device);
  TrainingState state = state_;
  state.training_weights = training_weights;
  save_checkpoint(path, env_.config, step_.model, *env_.tokenizer, state,
                  with_optimizer ? step_.optimizer.get() : nullptr);
}

}  // namespace nmt
