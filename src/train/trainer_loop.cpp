// The Trainer's loop: epochs, steps, logging, validation and stopping (the set-up is in
// trainer.cpp, the step in trainer_step.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <unistd.h>

#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/memory.h"
#include "train/average.h"
#include "train/schedule.h"
#include "train/trainer.h"
#include "train/trainer_internal.h"

namespace nmt {
namespace fs = std::filesystem;

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
  const Config& config = env_.config;
  WorldComm& comm = *env_.comm;
  RunLog& log = *env_.log;
  TrainSummary summary;
  summary.run_dir = env_.dir;
  clock_.seconds_before = state_.train_seconds;
  clock_.run_start = Clock::now();
  step_.model->train();
  if (config.train.validate_at_start && state_.step == 0) {
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
  if (final_validation && !summary.interrupted && validation_.last_step != state_.step &&
      totals_.tokens > 0) {
    run_validation(summary, /*final=*/true);
  }
  if (comm.is_main() && !summary.interrupted) write_average(summary);
  summary.steps = state_.step;
  summary.epochs_done = state_.epoch;
  summary.best_metric = state_.best_metric;
  // The closing lines go to the log before last.pt is written, so that they lie within the log
  // size last.pt records and a resume keeps them (train/resume.h).
  if (totals_.seconds > 0) {
    summary.tokens_per_second = double(totals_.tokens) / totals_.seconds;
    summary.flops_per_second = totals_.flops / totals_.seconds;
    log.line("throughput: " + fixed(summary.tokens_per_second, 0) + " target tokens/s, " +
             fixed(summary.flops_per_second / 1e9, 1) + " GFLOP/s of model matmuls" +
             (comm.size() > 1 && totals_.steps > 0
                  ? ", " + fixed(1000.0 * totals_.comm_seconds / double(totals_.steps), 1) +
                        " ms per step in collectives (gradient sum included)"
                  : std::string()));
  }
  if (!summary.error.empty()) {
    log.line("stopped: " + summary.error + "; state saved to " + (env_.dir / "last.pt").string() +
             "; resume with: nmt train --resume " + env_.dir.string());
  } else if (summary.interrupted) {
    log.line("interrupted at step " + std::to_string(state_.step) + "; state saved to " +
             (env_.dir / "last.pt").string() + "; resume with: nmt train --resume " +
             env_.dir.string());
  } else {
    log.line("finished (" + summary.stop_reason + ") after " + std::to_string(state_.step) +
             " steps; best " + choice_name(config.train.metric) + " " +
             fixed(state_.best_metric, 3) + " at step " + std::to_string(state_.best_step) +
             "; checkpoints in " + env_.dir.string());
  }
  if (comm.is_main()) keeper_.save_last();
  comm.barrier("the run's end (rank 0 saving last.pt)");
  return summary;
}

void Trainer::Impl::train_epoch(TrainSummary& summary) {
  const Config& config = env_.config;
  RunLog& log = *env_.log;
  data_.begin_epoch(state_.epoch);
  const PairsView pairs = data_.pairs();
  const auto batches = make_batches(pairs, batching_options(config.data), state_.epoch);
  if (batches.empty()) {  // start-up checks the mix; this guards any other way to an empty epoch
    throw Error("epoch " + std::to_string(state_.epoch + 1) +
                " has no batch to train on (data.train: " + std::to_string(pairs.size()) +
                " pairs this epoch); check data.train and its weights");
  }
  // A step takes accum_steps batches on each rank (TrainStep::run picks this rank's).
  const auto accum = size_t(config.train.accum_steps * env_.comm->size());
  data_.epoch_batches = int64_t(batches.size());
  if (console_is_terminal(log.console())) {
    ProgressOptions options;
    options.initial = state_.batch_in_epoch;  // a resumed epoch's rate counts new batches only
    log.show_bar(std::make_unique<ProgressBar>("epoch " + std::to_string(state_.epoch + 1),
                                               int64_t(batches.size()), log.console(), options));
  }
  while (size_t(state_.batch_in_epoch) < batches.size() && !stop_) {
    const auto first = batches.begin() + state_.batch_in_epoch;
    const std::vector<std::vector<size_t>> group(
        first, first + std::min(accum, size_t(batches.end() - first)));
    const auto start = Clock::now();
    const StepStats step = step_.run(group, data_, state_, clock_);
    const double seconds = RunClock::since(start);
    window_.add(step, seconds);
    totals_.add(step, seconds);
    state_.batch_in_epoch += int64_t(group.size());
    state_.step += 1;
    after_step(summary, step);
  }
  log.end_bar();
  if (size_t(state_.batch_in_epoch) < batches.size()) return;  // stopped inside the epoch
  state_.epoch += 1;
  state_.batch_in_epoch = 0;
  if (scheduler_.validates_at_epoch_end() && validation_.last_step != state_.step) {
    run_validation(summary);
    agree_stop(summary);
  }
}

void Trainer::Impl::after_step(TrainSummary& summary, const StepStats& step) {
  const Config& config = env_.config;
  RunLog& log = *env_.log;
  state_.train_seconds = env_.comm->size() > 1 ? clock_.agreed : clock_.elapsed();
  const double tokens_per_s = window_.seconds > 0 ? double(window_.tokens) / window_.seconds : 0.0;
  if (totals_.steps == 1) {
    log.say("first step done " + fixed(RunClock::since(clock_.constructed), 2) +
            " s after start-up began");
  }
  if (ProgressBar* bar = log.bar()) {
    bar->update(state_.batch_in_epoch, {{"loss", fixed(step.loss_sum / double(step.tokens), 3)},
                                        {"lr", scientific(step.lr)},
                                        {"tok/s", fixed(tokens_per_s, 0)}});
  }
  if (state_.step % config.train.log_every == 0 && window_.tokens > 0) {
    const auto [resident, heap] = check_memory(summary);
    const double mean_loss = window_.loss_sum / double(window_.tokens);
    const double ppl = std::exp(window_.nll_sum / double(window_.tokens));
    log.metrics({{"kind", "train"},
                 {"step", state_.step},
                 {"epoch", state_.epoch + 1},
                 {"loss", mean_loss},
                 {"ppl", ppl},
                 {"lr", step.lr},
                 {"tokens_per_s", tokens_per_s},
                 {"elapsed_s", state_.train_seconds},
                 {"rss_mb", resident / 1000000},
                 {"heap_mb", heap / 1000000}});
    // On a terminal the bar shows these numbers live; the log file still gets the line.
    log.line("step " + std::to_string(state_.step) + " | epoch " +
                 std::to_string(state_.epoch + 1) + " | loss " + fixed(mean_loss, 4) + " | ppl " +
                 fixed(ppl, 2) + " | lr " + scientific(step.lr) + " | " + fixed(tokens_per_s, 0) +
                 " tgt tok/s | " + fixed(state_.train_seconds, 0) + " s",
             /*console=*/log.bar() == nullptr);
    window_ = StepTotals{};
  }
  // The snapshot before validation's last.pt: a resume from last.pt at this step takes no
  // snapshot again, so one killed between the two would be missing from the average.
  if (env_.comm->is_main() && snapshots_.take(progress())) {
    save_snapshot(snapshots_.path(state_.step));
  }
  if (scheduler_.validates_after_step(state_.step)) run_validation(summary);
  check_stop(summary);
}

double Trainer::Impl::epochs_done() const {
  return double(state_.epoch) + (data_.epoch_batches > 0
                                     ? double(state_.batch_in_epoch) / double(data_.epoch_batches)
                                     : 0.0);
}

double Trainer::Impl::progress() const {
  return budget_progress(env_.config.train, state_.step, state_.train_seconds, epochs_done());
}

void Trainer::Impl::write_average(const TrainSummary& summary) {
  if (!snapshots_.enabled()) return;
  RunLog& log = *env_.log;
  const std::vector<fs::path> files = snapshots_.files();
  if (files.empty()) {
    log.line("averaging: no snapshot was due before the run stopped (" + summary.stop_reason +
             ", " + fixed(100.0 * progress(), 0) + "% of the budget); no averaged.pt: use best.pt");
    return;
  }
  // Building the averaged model draws initial weights from the CPU generator: its state goes
  // back, so that last.pt (saved after this) holds the training's, and a resume that raises the
  // limit draws the dropout masks a run never stopped would.
  const at::Tensor generator_state = cpu_generator_state();
  LoadedModel averaged = average_checkpoints(files, env_.device);
  set_cpu_generator_state(generator_state);
  const RunValidation::Report report = validation_.measure(averaged.model, /*monitors=*/false);
  const Scores& result = report.summary.mean;
  const fs::path output = env_.dir / "averaged.pt";
  save_checkpoint(output, averaged.config, averaged.model, averaged.tokenizer, averaged.state);
  const auto first = read_checkpoint_state(files.front()).step;
  // A budget too short for its window (the model still improving fast over it) averages in
  // weaker weights: then the final weights, validated at this step, are the better model. The
  // average is still written (what it is, is the same whatever it scores).
  const bool validated_now = validation_.last_step == state_.step;
  const bool worse = validated_now && result.loss() > validation_.last_loss;
  validation_.record(
      {{"kind", "averaged"},
       {"step", state_.step},
       {"snapshots", files.size()},
       {"first_step", first},
       {"better_than_final", validated_now ? nlohmann::json(!worse) : nlohmann::json()}},
      "averaged " + std::to_string(files.size()) + " snapshot(s), steps " + std::to_string(first) +
          " to " + std::to_string(averaged.state.step) + ", into " + output.string(),
      report, "");
  if (worse) {
    log.line("averaging: the average validates worse than the final weights (loss " +
             fixed(result.loss(), 4) + " against " + fixed(validation_.last_loss, 4) +
             "): the run is still improving fast over its last " +
             fixed(100.0 * env_.config.train.average_window, 0) +
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

bool Trainer::Impl::limit_reached(TrainSummary& summary) {
  const std::string reason = scheduler_.limit_reached(state_);
  if (!reason.empty()) summary.stop_reason = reason;
  stop_ = stop_ || !summary.stop_reason.empty();
  return stop_;
}

std::pair<int64_t, int64_t> Trainer::Impl::check_memory(TrainSummary& summary) {
  const double max_gb = env_.config.train.max_memory_gb;
  // By default the ranks on one machine share 90% of what it (or the cgroup) allows.
  const int64_t limit = memory_limit_bytes();
  const int64_t stop_at = max_gb > 0
                              ? int64_t(max_gb * 1e9)
                              : limit / 10 * 9 / std::max<int64_t>(1, env_.processes_on_host);
  int64_t own = anonymous_resident_bytes(), heap = heap_bytes();
  if (memory_action(own, heap, stop_at) != MemoryAction::kNone) {
    return_free_memory();
    own = anonymous_resident_bytes();
    heap = heap_bytes();
    if (memory_action(own, heap, stop_at) == MemoryAction::kStop && summary.error.empty()) {
      const std::string shared =
          env_.processes_on_host > 1
              ? ", shared by " + std::to_string(env_.processes_on_host) + " ranks"
              : std::string();
      const std::string allowed = max_gb > 0 ? fixed(max_gb, 2) + " GB"
                                             : "0: " + fixed(double(stop_at) / 1e9, 2) +
                                                   " GB, 90% of this machine's or " + "cgroup's " +
                                                   fixed(double(limit) / 1e9, 2) + " GB" + shared;
      summary.error = "at step " + std::to_string(state_.step) + " the process holds " +
                      fixed(double(own) / 1e9, 2) + " GB of its own memory (" +
                      fixed(double(heap) / 1e9, 2) + " GB allocated), past train.max_memory_gb (" +
                      allowed +
                      "); resume with --set train.max_memory_gb=GB to allow more, or lower "
                      "data.batch_tokens or the model's size";
      stop_ = summary.interrupted = true;  // saved as an interrupted run is, and resumable
      summary.stop_reason = "memory";
    }
  }
  return {resident_bytes(), heap};
}

void Trainer::Impl::run_validation(TrainSummary& summary, bool final) {
  if (!summary.error.empty()) return;  // a memory stop: decoding would only add to it
  validation_.last_step = state_.step;
  if (!env_.comm->is_main()) return;  // rank 0 alone validates; agree_stop passes on its decision
  const EmaWeightsIn average(step_.ema.get());  // validated and saved with train.ema_decay
  const RunValidation::Report report = validation_.measure(step_.model, /*monitors=*/true);
  step_.model->train();
  const Scores& result = report.summary.mean;
  validation_.last_loss = result.loss();
  const Scheduler::Verdict verdict =
      scheduler_.judge(result.metric(env_.config.train.metric), state_);
  // The 1-based epoch these weights are in, as in the train records: at an epoch's end the one
  // just finished, inside one (validate_every, a limit reached mid-epoch) the one under way.
  const int64_t epoch_of_weights = state_.batch_in_epoch > 0 ? state_.epoch + 1 : state_.epoch;
  nlohmann::json record = {{"kind", "valid"},
                           {"step", state_.step},
                           {"epoch", epoch_of_weights},
                           {"elapsed_s", state_.train_seconds}};
  if (step_.ema) record["weights"] = "ema";
  validation_.record(
      std::move(record), "valid step " + std::to_string(state_.step), report,
      std::string(step_.ema ? " | EMA weights" : "") + (verdict.best ? " | new best" : ""));
  if (!verdict.stop_reason.empty()) {
    stop_ = true;
    summary.stop_reason = verdict.stop_reason;
  }
  save_validation_checkpoints(verdict.best, final);
  // Decoding's buffers are shaped otherwise than a training step's, and the allocator keeps
  // them (src/cli/main.cpp): given back here, once per validation, training's own pages stay.
  return_free_memory();
}

void Trainer::Impl::save_validation_checkpoints(bool best, bool final) {
  // A limit can land a few steps after a validation (an epoch's end, then one more step): the
  // final weights then replace that checkpoint. "A few": under a tenth of the interval.
  const int64_t interval = scheduler_.validation_interval(
      data_.epoch_batches, env_.config.train.accum_steps * env_.comm->size());
  keeper_.after_validation(state_.step, best, final ? interval / 10 : 0);
}

void Trainer::Impl::agree_stop(TrainSummary& summary) {
  WorldComm& comm = *env_.comm;
  if (comm.size() == 1) return;
  auto flags = at::zeros({3}, at::kDouble);
  flags[0] = summary.interrupted ? 1.0 : 0.0;
  flags[1] = comm.is_main() && stop_ ? 1.0 : 0.0;  // limits, early stopping
  flags[2] = summary.error.empty() ? 0.0 : 1.0;    // past train.max_memory_gb
  comm.allreduce_sum(flags, "step " + std::to_string(state_.step) + ": agreeing to go on");
  if (flags[0].item<double>() > 0 && !summary.interrupted) {  // another rank's SIGINT/SIGTERM
    stop_ = summary.interrupted = true;
    summary.stop_reason = "interrupted";
  }
  if (flags[2].item<double>() > 0 && summary.error.empty()) {
    summary.error = "another rank passed train.max_memory_gb (its output names the numbers)";
    summary.stop_reason = "memory";
  }
  if (flags[1].item<double>() > 0 && !stop_) {
    stop_ = true;
    summary.stop_reason = "stopped by rank 0";
  }
}

}  // namespace nmt
