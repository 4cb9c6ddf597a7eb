#include "train/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

#include <unistd.h>

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/cpu_load.h"
#include "core/device.h"
#include "core/files.h"
#include "core/precision.h"
#include "model/seq2seq.h"
#include "train/flops.h"
#include "train/optimizer.h"
#include "train/trainer.h"
#include "train/trainer_internal.h"

namespace nmt {
namespace fs = std::filesystem;

namespace {
void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}
}  // namespace

double matmul_gflops(int64_t n, const std::string& dtype, int64_t iterations, int64_t repeats,
                     const at::Device& device) {
  torch::NoGradGuard no_grad;
  // Operands already in the dtype: the ceiling is the GEMM kernel's (OpenBLAS for fp32, oneDNN
  // for bf16 on the CPU; cuBLAS on CUDA), without autocast's casts, which the trainer's FLOP
  // count does not include either.
  const auto options =
      torch::TensorOptions(device).dtype(dtype == "bf16" ? at::kBFloat16 : at::kFloat);
  const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  auto c = torch::empty({n, n}, options);
  double best = std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < repeats + 1; ++r) {  // the first round warms caches and thread pools
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < iterations; ++i) at::mm_out(c, a, b);
    synchronize(device);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) best = std::min(best, seconds);
  }
  return 2.0 * double(n) * double(n) * double(n) * double(iterations) / best / 1e9;
}

std::vector<int64_t> ceiling_sizes(const at::Device& device) {
  if (device.is_cuda()) return {1024, 2048, 4096, 8192};
  return {256, 512, 1024, 2048};
}

int64_t ceiling_iterations(int64_t n, const at::Device& device, double seconds_per_product) {
  // CPU: 20 products of 1024 (about 0.1 s at 400 GFLOP/s); CUDA: 2e13 FLOP (tens of ms).
  if (device.is_cuda()) return std::max<int64_t>(10, int64_t(1e13 / (double(n) * n * n)));
  const int64_t same_work = std::max<int64_t>(2, 20 * 1024 / n);
  if (seconds_per_product <= 0.0) return same_work;
  return std::clamp<int64_t>(int64_t(0.1 / seconds_per_product), 1, same_work);
}

double ceiling_gflops_at(int64_t n, const std::string& dtype, const at::Device& device) {
  double seconds_per_product = 0.0;
  if (!device.is_cuda()) {  // one warm-up and one timed product
    seconds_per_product = 2.0 * double(n) * n * n / (1e9 * matmul_gflops(n, dtype, 1, 1, device));
  }
  return matmul_gflops(n, dtype, ceiling_iterations(n, device, seconds_per_product), 3, device);
}

double matmul_ceiling_gflops(const std::string& dtype, const at::Device& device) {
  double best = 0.0;
  for (const int64_t n : ceiling_sizes(device)) {
    best = std::max(best, ceiling_gflops_at(n, dtype, device));
  }
  return best;
}

StepProbe probe_training_steps(const ModelConfig& model_config, const TrainConfig& train,
                               const std::vector<Batch>& batches, int passes) {
  const at::Device device = resolve_device(train.device);
  Seq2Seq model(model_config);
  model->to(device);
  model->train();
  const auto optimizer = make_optimizer(model->named_parameters(), train);
  StepProbe probe;
  std::vector<Batch> on_device;
  for (const Batch& batch : batches) {
    on_device.push_back(batch.to(device));
    probe.tgt_tokens += batch.tgt_tokens;
    probe.flops += training_flops(
        model_config, {batch.size(), batch.src.size(1), batch.tgt_in.size(1), batch.tgt_tokens});
  }
  std::vector<std::pair<double, double>> timed;  // each timed pass's seconds and others' share
  for (int pass = 0; pass <= passes; ++pass) {
    synchronize(device);
    const CpuReading before = read_cpu();
    const auto start = std::chrono::steady_clock::now();
    for (const Batch& batch : on_device) {
      clear_gradients(*optimizer);
      const auto sums = batch_loss(model, batch, train, device);
      (sums.loss / double(std::max<int64_t>(1, batch.tgt_tokens))).backward();
      optimizer_step(*optimizer, clip_scale(model->parameters(), train.clip_norm));
    }
    synchronize(device);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const double others =
        device.is_cpu() ? others_cpu_share(before, read_cpu(), at::get_num_threads()) : -1.0;
    if (pass > 0) timed.emplace_back(took.count(), others);
  }
  std::sort(timed.begin(), timed.end());
  std::tie(probe.seconds, probe.others_share) = timed[timed.size() / 2];
  return probe;
}

TrainBenchResult bench_train(Config config, int64_t steps, int64_t warmup, std::ostream& out) {
  const fs::path run_dir =
      fs::temp_directory_path() / ("nmt_bench_train_" + std::to_string(::getpid()));
  remove_tree(run_dir);
  // Reuse a tokenizer already trained for this config's run, if there is one (saves minutes).
  const fs::path source_run = config.train.resolved_run_dir();
  fs::create_directories(run_dir);
  for (const char* name :
       {"spm.model", "spm.en.model", "spm.de.model", "spm.fr.model", "spm.cs.model"}) {
    if (fs::exists(source_run / name)) fs::copy_file(source_run / name, run_dir / name);
  }
  config.train.run_dir = run_dir.string();
  config.train.keep_checkpoints = 0;
  config.train.average_snapshots = 0;  // no snapshots, no final average (a validation)
  config.train.validate_at_start = false;
  config.train.max_epochs = 0;
  config.train.max_minutes = 0;
  config.train.log_every = std::max<int64_t>(1, steps);
  std::ostringstream quiet;
  TrainBenchResult result;
  {
    config.train.max_steps = warmup;
    if (warmup > 0) Trainer(config, false, quiet).run(/*final_validation=*/false);
    config.train.max_steps = warmup + steps;
    Trainer trainer(config, warmup > 0, quiet);
    std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
    if (const char* path = std::getenv("NMT_PROFILE")) {
      profile = std::make_unique<torch::autograd::profiler::RecordProfile>(std::string(path));
    }
    const TrainSummary summary = trainer.run(/*final_validation=*/false);
    profile.reset();
    if (!summary.error.empty()) throw Error("bench train: " + summary.error);
    result.tokens_per_second = summary.tokens_per_second;
    result.flops_per_second = summary.flops_per_second;
  }
  remove_tree(run_dir);
  const at::Device device = resolve_device(config.train.device);
  result.fp32_ceiling = 1e9 * matmul_ceiling_gflops("fp32", device);
  result.bf16_ceiling = 1e9 * matmul_ceiling_gflops("bf16", device);
  char line[512];
  std::snprintf(
      line, sizeof line,
      "train %s (%s, %s): %.0f target tokens/s, %.1f GFLOP/s of model matmuls = "
      "%.0f%% of the fp32 matmul ceiling (%.1f GFLOP/s), %.0f%% of the bf16 one "
      "(%.1f GFLOP/s)\n",
      config.train.name.c_str(), describe_precision(config.train.precision, device).c_str(),
      describe_device(device).c_str(), result.tokens_per_second, result.flops_per_second / 1e9,
      100.0 * result.flops_per_second / result.fp32_ceiling, result.fp32_ceiling / 1e9,
      100.0 * result.flops_per_second / result.bf16_ceiling, result.bf16_ceiling / 1e9);
  out << line;
  return result;
}

}  // namespace nmt
