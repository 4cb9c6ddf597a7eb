// train/data_parallel.cpp: shards, the worker pool and per-worker dropout seeds.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/dropout.h"
#include "train/data_parallel.h"

namespace nmt {
namespace {

TEST(DataParallel, ShardsInterleaveTheBatchAndDropEmptyOnes) {
  using Shards = std::vector<std::vector<size_t>>;
  EXPECT_EQ(interleaved_shards({4, 5, 6, 7, 8}, 2), (Shards{{4, 6, 8}, {5, 7}}));
  EXPECT_EQ(interleaved_shards({4, 5}, 3), (Shards{{4}, {5}}));
  EXPECT_EQ(interleaved_shards({4, 5, 6}, 1), (Shards{{4, 5, 6}}));
}

// Every worker runs each task once, single-threaded in LibTorch, while the caller's thread keeps
// its own thread count; a task's exception reaches the caller and the pool stays usable.
TEST(DataParallel, WorkerPoolRunsEachWorkerOnceAndRethrows) {
  const int before = at::get_num_threads();
  WorkerPool pool(3, before);
  std::vector<int> runs(3, 0), threads(3, 0);
  pool.run([&](int64_t w) {
    runs[size_t(w)] += 1;
    threads[size_t(w)] = at::get_num_threads();
  });
  EXPECT_EQ(runs, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(threads, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(at::get_num_threads(), before);
  EXPECT_THROW(pool.run([](int64_t w) {
    if (w == 1) throw std::runtime_error("worker 1 failed");
  }),
               std::runtime_error);
  pool.run([&](int64_t w) { runs[size_t(w)] += 1; });
  EXPECT_EQ(runs, (std::vector<int>{2, 2, 2}));
}

// Three workers, two shards each, finishing in reverse order (worker 2 first): the gradient is
// the workers' sums added in worker order, bit for bit, not the order the threads arrived in.
// The gradients are of mixed magnitude, so that the two orders differ in the last bits (checked).
TEST(DataParallel, WorkerGradientsAreSummedInWorkerOrderWhateverOrderTheyFinish) {
  torch::manual_seed(5);
  auto weights = torch::randn({4096}).requires_grad_(true);
  std::vector<std::vector<at::Tensor>> inputs(3);  // [worker][shard]
  for (auto& shards : inputs) {
    for (const double scale : {1e4, 1e-2}) shards.push_back(torch::randn({4096}) * scale);
  }
  WorkerPool pool(3, 1);
  WorkerGradients gradients({weights}, 3);
  pool.run([&](int64_t w) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60 * (2 - w)));
    for (const auto& x : inputs[size_t(w)]) gradients.backward(w, (weights * x).sum());
  });
  gradients.write_sum();
  const auto worker_sum = [&](size_t w) { return inputs[w][0] + inputs[w][1]; };
  const auto in_order = (worker_sum(0) + worker_sum(1)) + worker_sum(2);
  const auto reversed = (worker_sum(2) + worker_sum(1)) + worker_sum(0);
  ASSERT_FALSE(torch::equal(in_order, reversed));  // the order shows in the bits
  ASSERT_TRUE(weights.grad().defined());
  EXPECT_TRUE(torch::equal(weights.grad(), in_order));
  // Used again, it starts from empty buffers.
  pool.run([&](int64_t w) { gradients.backward(w, (weights * inputs[size_t(w)][0]).sum()); });
  gradients.write_sum();
  EXPECT_TRUE(torch::equal(weights.grad(), (inputs[0][0] + inputs[1][0]) + inputs[2][0]));
}

// A pool whose threads cannot all be started (here the address space runs out for their
// stacks) stops the ones already running and throws one error that names the setting; a
// std::thread left joinable would terminate the process instead. Run in a forked child, whose
// address space limit does not reach the test process.
TEST(DataParallel, WorkerPoolThatCannotStartItsThreadsThrowsInsteadOfTerminating) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang ends the child by SIGALRM, which fails the test
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    statm >> pages;
    const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (64 << 20);
    const rlimit as{limit, limit};
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    try {
      WorkerPool pool(256, 1);  // 256 stacks of 8 MiB do not fit in 64 MiB more
    } catch (const std::runtime_error& e) {
      _exit(std::string(e.what()).find("train.cpu_workers = 256: could not start worker thread") !=
                    std::string::npos
                ? 0
                : 4);
    } catch (...) {
      _exit(5);
    }
    _exit(6);  // every thread started: the limit did not bite
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Inside a DropoutSeedScope the masks follow the scope's seed, not the default generator.
TEST(DataParallel, DropoutSeedScopeMakesMasksIndependentOfTheGenerator) {
  Dropout dropout(0.5);
  dropout->train();
  const auto x = torch::ones({64});
  at::Tensor first, second;
  {
    torch::manual_seed(1);
    DropoutSeedScope scope(42);
    first = dropout(x);
  }
  {
    torch::manual_seed(2);
    DropoutSeedScope scope(42);
    second = dropout(x);
  }
  EXPECT_TRUE(torch::equal(first, second));
  DropoutSeedScope scope(43);
  EXPECT_FALSE(torch::equal(dropout(x), first));
}
}  // namespace
}  // namespace nmt
