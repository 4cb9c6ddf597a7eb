#include "train/data_parallel.h"

#include <stdexcept>
#include <string>
#include <system_error>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include "core/device.h"

namespace nmt {

WorkerPool::WorkerPool(int64_t workers, int64_t threads) {
  const int64_t n = std::max<int64_t>(workers, 1);
  for (int64_t w = 0; w < n; ++w) {
    try {
      threads_.emplace_back([this, w] { work(w); });
    } catch (const std::system_error& e) {
      // Stop and join the workers already started: a joinable std::thread destroyed by the
      // unwinding vector would terminate the process.
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      wake_.notify_all();
      for (auto& thread : threads_) thread.join();
      throw std::runtime_error("train.cpu_workers = " + std::to_string(workers) +
                               ": could not start worker thread " + std::to_string(w + 1) + " (" +
                               e.what() + "); use fewer workers");
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  started_ = true;
  wake_.notify_all();
  done_.wait(lock, [&] { return ready_ == size(); });
  lock.unlock();
  // The workers' at::set_num_threads(1) also set the default for threads started later.
  configure_threads(threads);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void WorkerPool::work(int64_t index) {
  int64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);  // one worker at a time changes ATen's settings
  // Touch ATen only once every worker thread exists, so that a pool which cannot start them
  // all stops threads that have done nothing: ATen's own thread pool, set up by
  // at::set_num_threads, hung in pthreadpool_create when its threads could not start either.
  wake_.wait(lock, [&] { return stop_ || started_; });
  if (stop_) return;
  set_thread_intra_op_threads(1);
  ++ready_;
  done_.notify_all();
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* task = task_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (++ready_ == size()) done_.notify_all();
  }
}

void WorkerPool::run(const std::function<void(int64_t)>& task) {
  const int64_t blas = blas_threads();
  set_blas_threads(1);
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  ready_ = 0;
  error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [&] { return ready_ == size(); });
  task_ = nullptr;
  const auto error = error_;
  lock.unlock();
  set_blas_threads(blas);
  if (error) std::rethrow_exception(error);
}

WorkerGradients::WorkerGradients(std::vector<at::Tensor> parameters, int64_t workers)
    : parameters_(std::move(parameters)), sums_(size_t(std::max<int64_t>(workers, 1))) {}

void WorkerGradients::backward(int64_t worker, const at::Tensor& loss) {
  auto grads = torch::autograd::grad({loss}, parameters_, /*grad_outputs=*/{},
                                     /*retain_graph=*/false, /*create_graph=*/false,
                                     /*allow_unused=*/true);
  auto& sums = sums_[size_t(worker)];
  if (sums.empty()) {
    sums = std::move(grads);
    return;
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    if (sums[i].defined()) {
      sums[i].add_(grads[i]);
    } else {
      sums[i] = std::move(grads[i]);
    }
  }
}

void WorkerGradients::write_sum() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    at::Tensor total;
    for (auto& sums : sums_) {
      if (sums.empty() || !sums[i].defined()) continue;
      if (total.defined()) {
        total.add_(sums[i]);
      } else {
        total = std::move(sums[i]);
      }
    }
    parameters_[i].mutable_grad() = total;
  }
  for (auto& sums : sums_) sums.clear();
}

std::vector<std::vector<size_t>> interleaved_shards(const std::vector<size_t>& indices,
                                                    int64_t shards) {
  std::vector<std::vector<size_t>> out(size_t(std::max<int64_t>(shards, 1)));
  for (size_t i = 0; i < indices.size(); ++i) out[i % out.size()].push_back(indices[i]);
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

}  // namespace nmt
