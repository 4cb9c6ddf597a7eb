// The Trainer's loop: epochs, steps, logging, validation and stopping (setup is in trainer.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <unistd.h>

#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "data/mixing.h"
#include "train/average.h"
#include "train/schedule.h"
#include "train/trainer.h"
#include "train/trainer_internal.h"

namespace nmt {
namespace fs = std::filesystem;

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

namespace {

std::string scientific(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2e", value);
  return buffer;
}

/// True when `out` is the process's stdout or stderr and that is a terminal.
bool console_is_terminal(const std::ostream& out) {
  if (&out == &std::cout) return isatty(STDOUT_FILENO) != 0;
  if (&out == &std::cerr || &out == &std::clog) return isatty(STDERR_FILENO) != 0;
  return false;
}

}  // namespace

TrainSummary Trainer::Impl::run(bool final_validation) {
  TrainSummary summary;
  summary.run_dir = run_dir_;
  window_->seconds_before = state_.train_seconds;
  window_->run_start = Clock::now();
  model_->train();
  if (config_.train.validate_at_start && state_.step == 0) {
    run_validation(summary);
    agree_stop(summary);
  }
  limit_reached(summary);  // resuming a finished run trains no further
  while (!stop_) {
    if (scheduler_.epochs_done(state_)) {
      summary.stop_reason = "max_epochs reached";
      break;
    }
    train_epoch(summary);
    // Steps check these in after_step; a path that takes no step must not loop past them.
    check_stop(summary);
  }
  // A run that ends on a limit validates its final weights too (they may be the best, and they
  // belong with the step checkpoints that get averaged); an interrupted run just saves.
  if (final_validation && !summary.interrupted && window_->last_validated != state_.step &&
      window_->run_tokens > 0) {
    run_validation(summary, /*final=*/true);
  }
  if (comm_->is_main() && !summary.interrupted) write_average(summary);
  summary.steps = state_.step;
  summary.epochs_done = state_.epoch;
  summary.best_metric = state_.best_metric;
  // The closing lines go to the log before last.pt is written, so that they lie within the log
  // size last.pt records and a resume keeps them (train/resume.h).
  if (window_->run_seconds > 0) {
    summary.tokens_per_second = double(window_->run_tokens) / window_->run_seconds;
    summary.flops_per_second = window_->run_flops / window_->run_seconds;
    log_->line(
        "throughput: " + fixed(summary.tokens_per_second, 0) + " target tokens/s, " +
        fixed(summary.flops_per_second / 1e9, 1) + " GFLOP/s of model matmuls" +
        (comm_->size() > 1 && window_->run_steps > 0
             ? ", " + fixed(1000.0 * window_->run_comm_seconds / double(window_->run_steps), 1) +
                   " ms per step in collectives (gradient sum included)"
             : std::string()));
  }
  if (summary.interrupted) {
    log_->line("interrupted at step " + std::to_string(state_.step) + "; state saved to " +
               (run_dir_ / "last.pt").string() + "; resume with: nmt train --resume " +
               run_dir_.string());
  } else {
    log_->line("finished (" + summary.stop_reason + ") after " + std::to_string(state_.step) +
               " steps; best " + choice_name(config_.train.metric) + " " +
               fixed(state_.best_metric, 3) + " at step " + std::to_string(state_.best_step) +
               "; checkpoints in " + run_dir_.string());
  }
  if (comm_->is_main()) keeper_.save_last();
  comm_->barrier("the run's end (rank 0 saving last.pt)");
  return summary;
}

void Trainer::Impl::train_epoch(TrainSummary& summary) {
  if (resegments_each_epoch(config_.data)) resample_epoch();
  if (mixes(train_.parts)) remix();
  const auto batches = make_batches(epoch_pairs(), batching_options(config_.data), state_.epoch);
  if (batches.empty()) {  // start-up checks the mix; this guards any other way to an empty epoch
    throw Error("epoch " + std::to_string(state_.epoch + 1) +
                " has no batch to train on (data.train: " + std::to_string(epoch_pairs().size()) +
                " pairs this epoch); check data.train and its weights");
  }
  // A step takes accum_steps batches on each rank (train_step picks this rank's).
  const auto accum = size_t(config_.train.accum_steps * comm_->size());
  window_->epoch_batches = int64_t(batches.size());
  if (console_is_terminal(log_->console())) {
    ProgressOptions options;
    options.initial = state_.batch_in_epoch;  // a resumed epoch's rate counts new batches only
    window_->bar = std::make_unique<ProgressBar>("epoch " + std::to_string(state_.epoch + 1),
                                                 int64_t(batches.size()), log_->console(), options);
  }
  while (size_t(state_.batch_in_epoch) < batches.size() && !stop_) {
    const auto first = batches.begin() + state_.batch_in_epoch;
    const std::vector<std::vector<size_t>> group(
        first, first + std::min(accum, size_t(batches.end() - first)));
    const auto start = Clock::now();
    const double loss = train_step(group);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    window_->seconds += seconds;
    window_->run_seconds += seconds;
    window_->run_steps += 1;
    state_.batch_in_epoch += int64_t(group.size());
    state_.step += 1;
    after_step(summary, loss);
  }
  if (window_->bar) window_->bar->finish();
  window_->bar.reset();
  if (size_t(state_.batch_in_epoch) < batches.size()) return;  // stopped inside the epoch
  state_.epoch += 1;
  state_.batch_in_epoch = 0;
  if (scheduler_.validates_at_epoch_end() && window_->last_validated != state_.step) {
    run_validation(summary);
    agree_stop(summary);
  }
}

PairsView Trainer::Impl::epoch_pairs() const {
  const PairStore& store = resegments_each_epoch(config_.data) ? sampled_ : train_.pairs;
  return PairsView(store, mixes(train_.parts) ? &mixed_ : nullptr);
}

void Trainer::Impl::remix() {
  mixed_ = epoch_mix(train_.parts, config_.data.seed, state_.epoch);
  if (mix_described_) return;
  mix_described_ = true;
  const auto counts = mix_counts(train_.parts);
  std::string text;
  for (size_t p = 0; p < counts.size(); ++p) {
    text += (p == 0 ? "" : ", ") + train_.parts[p].name + " " + std::to_string(counts[p]) + " of " +
            std::to_string(train_.parts[p].size()) + " (weight " +
            fixed(train_.parts[p].weight, 2) + ")";
  }
  say("corpus mix per epoch: " + text + "; " + std::to_string(mixed_.size()) + " pairs in all");
}

void Trainer::Impl::resample_epoch() {
  const auto start = Clock::now();
  const bool first = sampled_.size() == 0;
  AugmentCounts augmented;
  sampled_ = PairStore::from_examples(
      epoch_examples(config_.data, *train_text_, *tokenizer_, state_.epoch, &augmented),
      id_bytes_for(std::max(tokenizer_->src_vocab_size(), tokenizer_->tgt_vocab_size())));
  if (config_.data.augment.any()) say(describe(augmented, state_.epoch));
  if (!first || !samples_subwords(config_.data)) return;
  int64_t tgt_tokens = 0;
  for (size_t i = 0; i < sampled_.size(); ++i) tgt_tokens += int64_t(sampled_.tgt_len(i));
  const double per_sentence =
      sampled_.size() == 0 ? 0.0 : double(tgt_tokens) / double(sampled_.size());
  const double best =
      train_.stats.kept == 0 ? 0.0 : double(train_.stats.tgt_tokens) / double(train_.stats.kept);
  say("subword sampling (data.subword_alpha " + fixed(config_.data.subword_alpha, 2) +
      ", subword_nbest " + std::to_string(config_.data.subword_nbest) + "): epoch " +
      std::to_string(state_.epoch + 1) + " re-segmented in " +
      fixed(std::chrono::duration<double>(Clock::now() - start).count(), 2) + " s, " +
      fixed(per_sentence, 2) + " target pieces per sentence (best segmentation " + fixed(best, 2) +
      ")");
}

void Trainer::Impl::after_step(TrainSummary& summary, double loss) {
  auto& w = *window_;
  state_.train_seconds = comm_->size() > 1 ? w.agreed_elapsed : w.elapsed();
  const double lr = w.lr;
  if (w.run_steps == 1) {
    say("first step done " +
        fixed(std::chrono::duration<double>(Clock::now() - w.constructed).count(), 2) +
        " s after start-up began");
  }
  if (w.bar) {
    w.bar->update(state_.batch_in_epoch,
                  {{"loss", fixed(loss, 3)},
                   {"lr", scientific(lr)},
                   {"tok/s", fixed(w.seconds > 0 ? double(w.tokens) / w.seconds : 0.0, 0)}});
  }
  if (state_.step % config_.train.log_every == 0 && w.tokens > 0) {
    const double tokens_per_s = w.seconds > 0 ? double(w.tokens) / w.seconds : 0.0;
    const double mean_loss = w.loss_sum / double(w.tokens);
    const double ppl = std::exp(w.nll_sum / double(w.tokens));
    log_->metrics({{"kind", "train"},
                   {"step", state_.step},
                   {"epoch", state_.epoch + 1},
                   {"loss", mean_loss},
                   {"ppl", ppl},
                   {"lr", lr},
                   {"tokens_per_s", tokens_per_s},
                   {"elapsed_s", state_.train_seconds}});
    // On a terminal the bar shows these numbers live; the log file still gets the line.
    log_->line("step " + std::to_string(state_.step) + " | epoch " +
                   std::to_string(state_.epoch + 1) + " | loss " + fixed(mean_loss, 4) + " | ppl " +
                   fixed(ppl, 2) + " | lr " + scientific(lr) + " | " + fixed(tokens_per_s, 0) +
                   " tgt tok/s | " + fixed(state_.train_seconds, 0) + " s",
               /*console=*/!w.bar);
    w.loss_sum = w.nll_sum = w.seconds = 0.0;
    w.tokens = 0;
  }
  // The snapshot before validation's last.pt: a resume from last.pt at this step takes no
  // snapshot again, so one killed between the two would be missing from the average.
  if (comm_->is_main() && snapshots_.take(progress())) save_snapshot(snapshots_.path(state_.step));
  if (scheduler_.validates_after_step(state_.step)) {
    run_validation(summary);
  }
  check_stop(summary);
}

double Trainer::Impl::epochs_done() const {
  return double(state_.epoch) + (window_->epoch_batches > 0 ? double(state_.batch_in_epoch) /
                                                                  double(window_->epoch_batches)
                                                            : 0.0);
}

double Trainer::Impl::progress() const {
  return budget_progress(config_.train, state_.step, state_.train_seconds, epochs_done());
}

void Trainer::Impl::write_average(const TrainSummary& summary) {
  if (!snapshots_.enabled()) return;
  const std::vector<fs::path> files = snapshots_.files();
  if (files.empty()) {
    log_->line("averaging: no snapshot was due before the run stopped (" + summary.stop_reason +
               ", " + fixed(100.0 * progress(), 0) +
               "% of the budget); no averaged.pt: use best.pt");
    return;
  }
  // Building the averaged model draws initial weights from the CPU generator: its state goes
  // back, so that last.pt (saved after this) holds the training's, and a resume that raises the
  // limit draws the dropout masks a run never stopped would.
  const at::Tensor generator_state = cpu_generator_state();
  LoadedModel averaged = average_checkpoints(files, device_);
  set_cpu_generator_state(generator_state);
  const ValidationResult result =
      validate_sets(averaged.model, *tokenizer_, valids_, config_, device_).mean;
  const fs::path output = run_dir_ / "averaged.pt";
  save_checkpoint(output, averaged.config, averaged.model, averaged.tokenizer, averaged.state);
  const auto first = read_checkpoint_state(files.front()).step;
  const auto or_null = [](double v) {
    return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
  };
  // A budget too short for its window (the model still improving fast over it) averages in
  // weaker weights: then the final weights, validated at this step, are the better model. The
  // average is still written (what it is, is the same whatever it scores).
  const bool validated_now = window_->last_validated == state_.step;
  const bool worse = validated_now && result.loss > window_->last_valid_loss;
  log_->metrics({{"kind", "averaged"},
                 {"step", state_.step},
                 {"snapshots", files.size()},
                 {"first_step", first},
                 {"loss", result.loss},
                 {"ppl", result.perplexity},
                 {"bleu", or_null(result.bleu)},
                 {"chrf", or_null(result.chrf)},
                 {"better_than_final", validated_now ? nlohmann::json(!worse) : nlohmann::json()},
                 {"seconds", result.seconds}});
  log_->line("averaged " + std::to_string(files.size()) + " snapshot(s), steps " +
             std::to_string(first) + " to " + std::to_string(averaged.state.step) + ", into " +
             output.string() + " | valid loss " + fixed(result.loss, 4) +
             (std::isnan(result.bleu) ? "" : " | BLEU " + fixed(result.bleu, 2)) + " | " +
             fixed(result.seconds, 1) + " s");
  if (worse) {
    log_->line("averaging: the average validates worse than the final weights (loss " +
               fixed(result.loss, 4) + " against " + fixed(window_->last_valid_loss, 4) +
               "): the run is still improving fast over its last " +
               fixed(100.0 * config_.train.average_window, 0) +
               "%, so best.pt is the better model (scripts/run.sh evaluates it)");
  }
}

void Trainer::Impl::check_stop(TrainSummary& summary) {
  if (interrupted() && !summary.interrupted) {
    stop_ = summary.interrupted = true;
    summary.stop_reason = "interrupted";
  }
  if (!stop_) limit_reached(summary);
  agree_stop(summary);
}

void Trainer::Impl::say(const std::string& text) {
  if (!window_->bar) return log_->line(text);
  log_->line(text, /*console=*/false);
  window_->bar->message(text);
}

bool Trainer::Impl::limit_reached(TrainSummary& summary) {
  const std::string reason = scheduler_.limit_reached(state_);
  if (!reason.empty()) summary.stop_reason = reason;
  stop_ = stop_ || !summary.stop_reason.empty();
  return stop_;
}

void Trainer::Impl::run_validation(TrainSummary& summary, bool final) {
  if (!comm_->is_main()) {  // rank 0 alone validates; agree_stop passes on its decision
    window_->last_validated = state_.step;
    return;
  }
  const auto or_null = [](double v) {
    return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
  };
  const EmaWeightsIn average(ema_.get());  // validated and saved with train.ema_decay
  const ValidationSummary validation =
      validate_sets(model_, *tokenizer_, valids_, config_, device_);
  const ValidationResult& result = validation.mean;
  // The 1-based epoch these weights are in, as in the train records: at an epoch's end the one
  // just finished, inside one (validate_every, a limit reached mid-epoch) the one under way.
  const int64_t epoch_of_weights = state_.batch_in_epoch > 0 ? state_.epoch + 1 : state_.epoch;
  nlohmann::json record = {{"kind", "valid"},
                           {"step", state_.step},
                           {"epoch", epoch_of_weights},
                           {"loss", result.loss},
                           {"ppl", result.perplexity},
                           {"bleu", or_null(result.bleu)},
                           {"chrf", or_null(result.chrf)}};
  std::string monitored;
  const auto add = [&](const std::string& name, const ValidationResult& other) {
    record["bleu_" + name] = or_null(other.bleu);
    record["chrf_" + name] = or_null(other.chrf);
    record["loss_" + name] = other.loss;
    monitored += " | " + name +
                 (std::isnan(other.bleu) ? " loss " + fixed(other.loss, 4)
                                         : " BLEU " + fixed(other.bleu, 2));
  };
  // Several pairs: each validation set's own numbers too (the record's loss/bleu/chrf and the
  // best checkpoint are their mean).
  if (valids_.size() > 1) {
    for (size_t i = 0; i < valids_.size(); ++i) add(valids_[i].name, validation.each[i]);
  }
  for (const auto& set : monitors_)
    add(set.name, validate(model_, *tokenizer_, set, config_, device_));
  model_->train();
  window_->last_validated = state_.step;
  window_->last_valid_loss = result.loss;
  const double metric = result.metric(config_.train.metric);
  const Scheduler::Verdict verdict = scheduler_.judge(metric, state_);
  const bool best = verdict.best;
  if (ema_) record["weights"] = "ema";
  record["seconds"] = result.seconds;
  record["elapsed_s"] = state_.train_seconds;
  log_->metrics(record);
  say("valid step " + std::to_string(state_.step) + " | loss " + fixed(result.loss, 4) + " | ppl " +
      fixed(result.perplexity, 2) +
      (std::isnan(result.bleu)
           ? ""
           : " | BLEU " + fixed(result.bleu, 2) + " | chrF " + fixed(result.chrf, 2)) +
      monitored + " | " + fixed(result.seconds, 1) + " s" + (ema_ ? " | EMA weights" : "") +
      (best ? " | new best" : ""));
  if (!verdict.stop_reason.empty()) {
    stop_ = true;
    summary.stop_reason = verdict.stop_reason;
  }
  save_validation_checkpoints(best, final);
}

void Trainer::Impl::save_validation_checkpoints(bool best, bool final) {
  // A limit can land a few steps after a validation (an epoch's end, then one more step): the
  // final weights then replace that checkpoint. "A few": under a tenth of the interval.
  const int64_t interval = scheduler_.validation_interval(
      window_->epoch_batches, config_.train.accum_steps * comm_->size());
  keeper_.after_validation(state_.step, best, final ? interval / 10 : 0);
}

}  // namespace nmt
