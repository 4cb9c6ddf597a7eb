// The Trainer's optimizer step: the step's batches cut into shards for this rank's workers,
// forward and backward, the sums over the ranks, clipping and the update (the loop around it is
// trainer_loop.cpp).
#include <cmath>
#include <optional>

#include "core/device.h"
#include "core/error.h"
#include "core/precision.h"
#include "core/special_ids.h"
#include "model/dropout.h"
#include "train/flops.h"
#include "train/loss.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/trainer.h"
#include "train/trainer_internal.h"

namespace nmt {
namespace {

/// Loss sums of one batch: only non-padding target positions reach the output projection
/// (a third of a Multi30k batch's positions can be padding; the projection is the widest matmul).
/// With R-Drop (train.rdrop_alpha > 0) the batch is stacked on itself, so one pass gives each
/// sentence two dropout masks; the sums are (both copies' cross-entropy + α·symmetric KL) / 2,
/// as in Liang et al. 2021, so that divided by the batch's target tokens they stay per-token
/// means comparable with a run without it.
LossSums batch_loss(Seq2Seq& model, const Batch& batch, const TrainConfig& config,
                    const at::Device& device) {
  const bool rdrop = config.rdrop_alpha > 0.0;
  const auto twice = [rdrop](const at::Tensor& t) { return rdrop ? at::cat({t, t}, 0) : t; };
  at::Tensor logits, targets;
  {
    AutocastGuard autocast(config.precision, device);
    const auto hidden = model->forward_hidden(twice(batch.src), twice(batch.tgt_in));
    const auto flat = twice(batch.tgt_out).reshape(-1);  // [b * tgt_len] (twice with R-Drop)
    const auto keep =
        flat.ne(kPadId).nonzero().squeeze(1);  // [tokens]: first copy's, then second's
    const auto selected = hidden.reshape({-1, hidden.size(2)}).index_select(0, keep);
    logits = model->decoder->project(selected);  // [tokens, vocab]
    targets = flat.index_select(0, keep);        // [tokens]
  }
  const auto sums = label_smoothed_cross_entropy(logits, targets, config.label_smoothing);
  if (!rdrop) return sums;
  const auto kl = symmetric_kl_sum(logits);
  return {0.5 * (sums.loss + config.rdrop_alpha * kl), 0.5 * sums.nll};
}

/// One worker's part of one batch, and the batch's slot in the step (which picks its seeds).
struct Shard {
  Batch batch;
  size_t slot;
};

/// The step's batches as shards per worker: this rank's slots [begin, end) of `group`, each cut
/// into interleaved shards (whole batches without workers). Adds the model FLOPs of those
/// shards to `flops`; returns the target tokens of the whole group (every rank's batches).
int64_t cut_shards(const PairsView& pairs, const std::vector<std::vector<size_t>>& group,
                   std::pair<size_t, size_t> mine, const Config& config,
                   std::vector<std::vector<Shard>>& shards, double& flops) {
  const size_t workers = shards.size();
  int64_t tokens = 0;
  for (size_t k = 0; k < group.size(); ++k) {
    for (const size_t i : group[k]) tokens += int64_t(pairs.tgt_len(i)) + 1;  // + eos
    if (k < mine.first || k >= mine.second) continue;
    const auto parts = workers > 1 ? interleaved_shards(group[k], int64_t(workers))
                                   : std::vector<std::vector<size_t>>{group[k]};
    for (size_t w = 0; w < parts.size(); ++w) {
      shards[w].push_back({collate(pairs, parts[w]), k});
      const Batch& b = shards[w].back().batch;
      // R-Drop runs each batch twice: twice the model work for the same target tokens.
      const int64_t copies = config.train.rdrop_alpha > 0.0 ? 2 : 1;
      flops += training_flops(config.model, {copies * b.size(), b.src.size(1), b.tgt_in.size(1),
                                             copies * b.tgt_tokens});
    }
  }
  return tokens;
}

}  // namespace

double Trainer::Impl::train_step(const std::vector<std::vector<size_t>>& group) {
  const size_t workers = workers_ ? size_t(workers_->size()) : 1;
  const bool several = comm_->size() > 1;
  const auto accum = size_t(config_.train.accum_steps);
  // This rank's batches: slots [rank * accum, (rank + 1) * accum) of the step's group.
  const size_t begin = std::min(group.size(), size_t(comm_->rank()) * accum);
  const std::pair<size_t, size_t> mine{
      begin, several ? std::min(group.size(), begin + accum) : group.size()};
  // Dropout: one seed per (slot of the step, worker), drawn by every rank in that order, so
  // that a batch's masks depend on its slot alone and W processes with accum_steps a train as
  // one process with accum_steps W·a. One batch on one worker draws from the default generator.
  std::vector<uint64_t> seeds;
  if (workers > 1 || accum * size_t(comm_->size()) > 1) {
    for (size_t i = 0; i < group.size() * workers; ++i) seeds.push_back(draw_dropout_seed());
  }
  std::vector<std::vector<Shard>> shards(workers);
  double rank_flops = 0.0;
  const int64_t tokens = cut_shards(epoch_pairs(), group, mine, config_, shards,
                                    several ? rank_flops : window_->run_flops);
  window_->run_tokens += tokens;
  clear_gradients(*optimizer_);
  std::vector<double> losses(workers, 0.0), nlls(workers, 0.0);
  // Several workers: their gradients are added in worker order (data_parallel.h).
  std::optional<WorkerGradients> worker_grads;
  if (workers > 1) worker_grads.emplace(model_->parameters(), int64_t(workers));
  const auto run_shards = [&](size_t w) {
    for (const auto& shard : shards[w]) {
      std::optional<DropoutSeedScope> dropout_seeds;
      if (!seeds.empty()) dropout_seeds.emplace(seeds[shard.slot * workers + w]);
      // On a GPU, at::dropout draws from the device's generator: the same seed there too.
      if (!seeds.empty()) seed_accelerator_generator(device_, seeds[shard.slot * workers + w]);
      const auto sums = batch_loss(model_, shard.batch.to(device_), config_.train, device_);
      const auto mean = sums.loss / double(tokens);  // mean over every target token of the step
      if (worker_grads) {
        worker_grads->backward(int64_t(w), mean);
      } else {
        mean.backward();
      }
      losses[w] += sums.loss.item<double>();
      nlls[w] += sums.nll.item<double>();
    }
  };
  if (workers > 1) {
    workers_->run([&](int64_t w) { run_shards(size_t(w)); });
    worker_grads->write_sum();
  } else {
    run_shards(0);
  }
  std::vector<double> sums{0.0, 0.0, rank_flops};  // loss, nll, flops of this rank
  for (size_t w = 0; w < workers; ++w) {           // summed in worker order: the same every run
    sums[0] += losses[w];
    sums[1] += nlls[w];
    if (!several) window_->nll_sum += nlls[w];
  }
  if (several) {
    reduce_step(sums);
    window_->nll_sum += sums[1];
    window_->run_flops += sums[2];
  }
  const double loss_sum = sums[0];
  if (!std::isfinite(loss_sum)) {
    throw Error("non-finite training loss at step " + std::to_string(state_.step + 1) +
                ": training stopped without saving; the last good checkpoint is " +
                (run_dir_ / "last.pt").string() +
                ". Lower train.lr, raise train.warmup or use train.precision=fp32");
  }
  const double grad_scale = clip_scale(model_->parameters(), config_.train.clip_norm);
  const double epochs =
      double(state_.epoch) + double(state_.batch_in_epoch + int64_t(group.size())) /
                                 double(std::max<int64_t>(window_->epoch_batches, 1));
  const double elapsed = several ? window_->agreed_elapsed : window_->elapsed();
  const double progress_after = budget_progress(config_.train, state_.step + 1, elapsed, epochs);
  const double lr = learning_rate(config_.train, state_.step + 1, progress_after);
  if (const double share = config_.train.warmup.share();
      share > 0 && progress_after >= share && progress() < share) {
    log_->line("warmup: the peak learning rate at step " + std::to_string(state_.step + 1) + ", " +
               config_.train.warmup.text() + " of the budget (" + describe_budget(config_.train) +
               ": about " +
               std::to_string(int64_t(std::llround(double(state_.step + 1) / progress_after))) +
               " steps at the rate so far)");
  }
  window_->lr = lr;
  for (auto& group_options : optimizer_->param_groups()) group_options.options().set_lr(lr);
  optimizer_step(*optimizer_, grad_scale);
  if (ema_) ema_->update(state_.step + 1);
  window_->loss_sum += loss_sum;
  window_->tokens += tokens;
  return loss_sum / double(tokens);
}

void Trainer::Impl::reduce_step(std::vector<double>& sums) {
  const std::string step = "step " + std::to_string(state_.step + 1);
  const auto start = Clock::now();
  allreduce_gradients(*comm_, model_->parameters(), step + ": gradient allreduce");
  sums.push_back(comm_->is_main() ? window_->elapsed() : 0.0);  // rank 0's clock for everyone
  auto values = at::tensor(sums, at::kDouble);
  comm_->allreduce_sum(values, step + ": sums of the loss");
  const auto reduced = values.accessor<double, 1>();
  for (size_t i = 0; i < sums.size(); ++i) sums[i] = reduced[int64_t(i)];
  window_->agreed_elapsed = sums.back();
  sums.pop_back();
  // Waiting for the slowest rank is part of it: that is what a step pays for the collectives.
  window_->run_comm_seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void Trainer::Impl::agree_stop(TrainSummary& summary) {
  if (comm_->size() == 1) return;
  auto flags = at::zeros({2}, at::kDouble);
  flags[0] = summary.interrupted ? 1.0 : 0.0;
  flags[1] = comm_->is_main() && stop_ ? 1.0 : 0.0;  // limits, early stopping
  comm_->allreduce_sum(flags, "step " + std::to_string(state_.step) + ": agreeing to go on");
  if (flags[0].item<double>() > 0 && !summary.interrupted) {  // another rank's SIGINT/SIGTERM
    stop_ = summary.interrupted = true;
    summary.stop_reason = "interrupted";
  }
  if (flags[1].item<double>() > 0 && !stop_) {
    stop_ = true;
    summary.stop_reason = "stopped by rank 0";
  }
}

}  // namespace nmt
