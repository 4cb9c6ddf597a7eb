#include "core/device.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include "core/error.h"

// OpenBLAS keeps its own thread pool; call its setter when the library is loaded (weak symbol:
// absent with another BLAS).
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" int openblas_get_num_threads() __attribute__((weak));

namespace nmt {

at::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? at::Device(at::kCUDA, 0) : at::kCPU;
  if (name == "cpu") return at::kCPU;
  if (name.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw Error("device '" + name + "' requested but CUDA is not available in this build or " +
                  "machine: use --device cpu or auto");
    }
    try {
      at::Device device(name);
      const int64_t count = int64_t(torch::cuda::device_count());
      if (device.has_index() && device.index() >= count) {
        throw Error("device '" + name + "': only " + std::to_string(count) + " CUDA device(s)");
      }
      return device.has_index() ? device : at::Device(at::kCUDA, 0);
    } catch (const c10::Error&) {
      throw Error("device '" + name + "' is not valid: use auto, cpu, cuda or cuda:N");
    }
  }
  throw Error("device '" + name + "' is not valid: use auto, cpu, cuda or cuda:N");
}

int64_t configure_threads(int64_t threads) {
  if (threads <= 0) threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  at::set_num_threads(int(threads));
  set_blas_threads(threads);
  return threads;
}

void set_thread_intra_op_threads(int64_t threads) {
  // ATen initialises a thread's OpenMP thread count at its first parallel op, to the process
  // default, and records that in an inline function's thread_local flag. LibTorch 2.x builds
  // with hidden visibility, so its library keeps a copy of that flag apart from this program's:
  // set off both now (at::parallel_for here is this program's copy, at::get_num_threads runs
  // the library's), or the first op inside the library would reset this thread to the default.
  at::parallel_for(0, 1, 1, [](int64_t, int64_t) {});
  (void)at::get_num_threads();
  at::set_num_threads(int(std::max<int64_t>(threads, 1)));
}

int64_t blas_threads() {
  return openblas_get_num_threads != nullptr ? openblas_get_num_threads() : 0;
}

void set_blas_threads(int64_t threads) {
  if (openblas_set_num_threads != nullptr && threads > 0) openblas_set_num_threads(int(threads));
}

std::string describe_device(const at::Device& device) {
  if (device.is_cuda()) return "device " + device.str() + " (CUDA)";
  const char* policy = std::getenv("OMP_WAIT_POLICY");  // set by nmt's runtime tuning
  return "device cpu, " + std::to_string(at::get_num_threads()) + " thread(s)" +
         (policy != nullptr ? std::string(", OMP_WAIT_POLICY=") + policy : std::string());
}

namespace {

/// The default generator of `device` when it is an accelerator (the CPU's is the trainer's own).
std::optional<at::Generator> accelerator_generator(const at::Device& device) {
  if (device.is_cpu()) return std::nullopt;
  return at::globalContext().defaultGenerator(device);
}

}  // namespace

at::Tensor accelerator_generator_state(const at::Device& device) {
  auto generator = accelerator_generator(device);
  if (!generator) return {};
  std::lock_guard<std::mutex> lock(generator->mutex());
  return generator->get_state();
}

void set_accelerator_generator_state(const at::Device& device, const at::Tensor& state) {
  auto generator = accelerator_generator(device);
  if (!generator || !state.defined()) return;
  std::lock_guard<std::mutex> lock(generator->mutex());
  generator->set_state(state);
}

at::Tensor cpu_generator_state() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void set_cpu_generator_state(const at::Tensor& state) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

void seed_accelerator_generator(const at::Device& device, uint64_t seed) {
  auto generator = accelerator_generator(device);
  if (!generator) return;
  std::lock_guard<std::mutex> lock(generator->mutex());
  generator->set_current_seed(seed);
}

}  // namespace nmt
