#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

namespace nmt {

/// Data-parallel training on the CPU (Marian's --cpu-threads): persistent worker threads, each
/// running LibTorch single-threaded, that take one shard of a step's batch each and run forward
/// and backward on the one shared model; autograd sums their gradients into the parameters.
///
/// Why: a small Transformer's training step is many small ops. On 2 cores, one thread per op
/// (intra-op parallelism) ran at 1.29x one core's speed (bench train, fp32, AVX2 EPYC), because
/// most ops are too small to split well; two independent shards keep both cores busy.
class WorkerPool {
 public:
  /// Starts `workers` threads (>= 1), each with LibTorch's intra-op threads set to 1. Restores
  /// this thread's setting (`threads`) afterwards: ATen keeps the count per OpenMP thread.
  WorkerPool(int64_t workers, int64_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int64_t size() const { return int64_t(threads_.size()); }

  /// Runs task(w) for every worker w at once, OpenBLAS single-threaded meanwhile (its own
  /// threads would fight the workers), and returns when all are done. The first exception a
  /// task throws is rethrown here, after every task has finished.
  void run(const std::function<void(int64_t)>& task);

 private:
  void work(int64_t index);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t generation_ = 0;  ///< bumped by run(): a worker runs each generation once
  int64_t ready_ = 0;       ///< workers started (constructor) / finished (run)
  bool started_ = false;    ///< every worker thread exists: they may set up ATen
  bool stop_ = false;
  std::exception_ptr error_;
};

/// The gradients of several workers' backward passes, summed in worker order whatever order the
/// threads finish in. Backward into the shared `.grad` would add them as the threads arrive,
/// and float addition is not associative: with three workers, or two shards per worker
/// (accum_steps), runs differed in the last bits. Each worker sums its own shards into buffers
/// of its own; write_sum() then adds the buffers 0 + 1 + 2 ... (two workers give a + b either
/// way, so their results are those of the shared sum).
class WorkerGradients {
 public:
  WorkerGradients(std::vector<at::Tensor> parameters, int64_t workers);

  /// Worker `worker`'s backward of `loss`: adds d loss / d parameters to that worker's buffers.
  /// Safe to call from the workers' threads at once, each with its own index.
  void backward(int64_t worker, const at::Tensor& loss);

  /// Sets each parameter's .grad to the sum of the workers' buffers, in worker order (undefined
  /// where no worker reached it), and empties the buffers.
  void write_sum();

 private:
  std::vector<at::Tensor> parameters_;
  std::vector<std::vector<at::Tensor>> sums_;  ///< [worker][parameter]
};

/// Splits a batch's example indices into `shards` interleaved shards (i goes to shard i mod n):
/// a length-bucketed batch's shards then have about equal tokens and padding. Empty shards
/// (fewer examples than shards) are dropped.
std::vector<std::vector<size_t>> interleaved_shards(const std::vector<size_t>& indices,
                                                    int64_t shards);

}  // namespace nmt
