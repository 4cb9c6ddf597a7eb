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

namespace {

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

StepStats TrainStep::run(const std::vector<std::vector<size_t>>& group, const TrainingData& data,
                         const TrainingState& state, RunClock& clock) {
  const Config& config = env_.config;
  WorldComm& comm = *env_.comm;
  const size_t worker_count = workers ? size_t(workers->size()) : 1;
  const bool several = comm.size() > 1;
  const auto accum = size_t(config.train.accum_steps);
  // This rank's batches: slots [rank * accum, (rank + 1) * accum) of the step's group.
  const size_t begin = std::min(group.size(), size_t(comm.rank()) * accum);
  const std::pair<size_t, size_t> mine{
      begin, several ? std::min(group.size(), begin + accum) : group.size()};
  // Dropout: one seed per (slot of the step, worker), drawn by every rank in that order, so
  // that a batch's masks depend on its slot alone and W processes with accum_steps a train as
  // one process with accum_steps W·a. One batch on one worker draws from the default generator.
  std::vector<uint64_t> seeds;
  if (worker_count > 1 || accum * size_t(comm.size()) > 1) {
    for (size_t i = 0; i < group.size() * worker_count; ++i) seeds.push_back(draw_dropout_seed());
  }
  std::vector<std::vector<Shard>> shards(worker_count);
  StepStats stats;
  stats.tokens = cut_shards(data.pairs(), group, mine, config, shards, stats.flops);
  clear_gradients(*optimizer);
  std::vector<double> losses(worker_count, 0.0), nlls(worker_count, 0.0);
  // Several workers: their gradients are added in worker order (data_parallel.h).
  std::optional<WorkerGradients> worker_grads;
  if (worker_count > 1) worker_grads.emplace(model->parameters(), int64_t(worker_count));
  const auto run_shards = [&](size_t w) {
    for (const auto& shard : shards[w]) {
      std::optional<DropoutSeedScope> dropout_seeds;
      if (!seeds.empty()) dropout_seeds.emplace(seeds[shard.slot * worker_count + w]);
      // On a GPU, at::dropout draws from the device's generator: the same seed there too.
      if (!seeds.empty())
        seed_accelerator_generator(env_.device, seeds[shard.slot * worker_count + w]);
      const auto sums = batch_loss(model, shard.batch.to(env_.device), config.train, env_.device);
      const auto mean =
          sums.loss / double(stats.tokens);  // mean over every target token of the step
      if (worker_grads) {
        worker_grads->backward(int64_t(w), mean);
      } else {
        mean.backward();
      }
      losses[w] += sums.loss.item<double>();
      nlls[w] += sums.nll.item<double>();
    }
  };
  if (worker_count > 1) {
    workers->run([&](int64_t w) { run_shards(size_t(w)); });
    worker_grads->write_sum();
  } else {
    run_shards(0);
  }
  std::vector<double> sums{0.0, 0.0, stats.flops};  // loss, nll, flops of this rank
  for (size_t w = 0; w < worker_count; ++w) {       // summed in worker order: the same every run
    sums[0] += losses[w];
    sums[1] += nlls[w];
  }
  if (several) stats.comm_seconds = reduce(sums, state.step + 1, clock);
  stats.loss_sum = sums[0];
  stats.nll_sum = sums[1];
  stats.flops = sums[2];
  if (!std::isfinite(stats.loss_sum)) {
    throw Error("non-finite training loss at step " + std::to_string(state.step + 1) +
                ": training stopped without saving; the last good checkpoint is " +
                (env_.dir / "last.pt").string() +
                ". Lower train.lr, raise train.warmup or use train.precision=fp32");
  }
  const double grad_scale = clip_scale(model->parameters(), config.train.clip_norm);
  const auto epochs_after = [&](int64_t batches) {
    return double(state.epoch) + double(state.batch_in_epoch + batches) /
                                     double(std::max<int64_t>(data.epoch_batches, 1));
  };
  const double elapsed = several ? clock.agreed : clock.elapsed();
  const double progress_after =
      budget_progress(config.train, state.step + 1, elapsed, epochs_after(int64_t(group.size())));
  stats.lr = learning_rate(config.train, state.step + 1, progress_after);
  if (const double share = config.train.warmup.share(); share > 0 && progress_after >= share) {
    const double epochs_before = data.epoch_batches > 0 ? epochs_after(0) : double(state.epoch);
    if (budget_progress(config.train, state.step, state.train_seconds, epochs_before) < share) {
      env_.log->line(
          "warmup: the peak learning rate at step " + std::to_string(state.step + 1) + ", " +
          config.train.warmup.text() + " of the budget (" + describe_budget(config.train) +
          ": about " +
          std::to_string(int64_t(std::llround(double(state.step + 1) / progress_after))) +
          " steps at the rate so far)");
    }
  }
  for (auto& group_options : optimizer->param_groups()) group_options.options().set_lr(stats.lr);
  optimizer_step(*optimizer, grad_scale);
  if (ema) ema->update(state.step + 1);
  return stats;
}

double TrainStep::reduce(std::vector<double>& sums, int64_t step, RunClock& clock) {
  WorldComm& comm = *env_.comm;
  const std::string name = "step " + std::to_string(step);
  const auto start = Clock::now();
  allreduce_gradients(comm, model->parameters(), name + ": gradient allreduce");
  sums.push_back(comm.is_main() ? clock.elapsed() : 0.0);  // rank 0's clock for everyone
  auto values = at::tensor(sums, at::kDouble);
  comm.allreduce_sum(values, name + ": sums of the loss");
  const auto reduced = values.accessor<double, 1>();
  for (size_t i = 0; i < sums.size(); ++i) sums[i] = reduced[int64_t(i)];
  clock.agreed = sums.back();
  sums.pop_back();
  // Waiting for the slowest rank is part of it: that is what a step pays for the collectives.
  return RunClock::since(start);
}

}  // namespace nmt
