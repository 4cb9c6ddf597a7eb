#include "cli/runtime.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/precision.h"

namespace nmt::cli {
namespace {

std::vector<std::string> original_args;  // main's argv (dispatch rewrites argv[1] later)

/// Set (to "passive") in the environment when tune_runtime chose the wait policy itself.
constexpr const char* kChosenPolicy = "NMT_CHOSEN_WAIT_POLICY";

/// Whether the command trains (`train`, `bench`) and does not only ask for a help text or the
/// version: the commands whose OpenMP wait policy was measured to matter. Every other command
/// keeps libgomp's default (spin a little, then sleep), which decoded faster than PASSIVE, and
/// is spared the second start (0.4 s).
bool wants_passive(char** argv) {
  if (argv[0] == nullptr || argv[1] == nullptr) return false;
  if (std::strcmp(argv[1], "train") != 0 && std::strcmp(argv[1], "bench") != 0) return false;
  for (char** arg = argv + 1; *arg != nullptr; ++arg) {
    for (const char* flag : {"-h", "--help", "-V", "--version"}) {
      if (std::strcmp(*arg, flag) == 0) return false;
    }
  }
  return true;
}

}  // namespace

void tune_runtime(char** argv) {
  for (char** arg = argv; *arg != nullptr; ++arg) original_args.emplace_back(*arg);
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("NMT_NO_REEXEC") == nullptr &&
      wants_passive(argv)) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    setenv(kChosenPolicy, "passive", 1);
    setenv("NMT_NO_REEXEC", "1", 1);  // never loop, whatever happens
    execv("/proc/self/exe", argv);    // returns only on failure: then carry on as we are
  }
  const char* malloc_mb = std::getenv("NMT_MALLOC_THRESHOLD_MB");  // 0: glibc's defaults
  const long mb = malloc_mb != nullptr ? std::atol(malloc_mb) : 32;
  if (mb > 0) {
    mallopt(M_MMAP_THRESHOLD, int(mb * 1024 * 1024));
    mallopt(M_TRIM_THRESHOLD, int(4 * mb * 1024 * 1024));
  }
}

void tune_for_training(const Config& config) {
  const char* chosen = std::getenv(kChosenPolicy);
  if (chosen == nullptr || std::strcmp(chosen, "passive") != 0 || original_args.empty()) return;
  const at::Device device = resolve_device(config.train.device);
  if (!device.is_cpu() || resolve_precision(config.train.precision, device) != Precision::kBf16)
    return;
  setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  setenv(kChosenPolicy, "active", 1);  // once only
  std::vector<char*> argv;
  for (auto& arg : original_args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv("/proc/self/exe", argv.data());  // returns only on failure: carry on with PASSIVE
}

}  // namespace nmt::cli
