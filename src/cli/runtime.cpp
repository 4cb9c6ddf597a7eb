#include "cli/runtime.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>

namespace nmt::cli {

void tune_runtime(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("NMT_NO_REEXEC") == nullptr) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
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

}  // namespace nmt::cli
