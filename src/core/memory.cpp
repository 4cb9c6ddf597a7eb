#include "core/memory.h"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace nmt {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * int64_t(sysconf(_SC_PAGESIZE));
}

int64_t return_free_memory() {
  const int64_t before = resident_bytes();
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  // jemalloc's mallctl, when the binary links it; "arena.4096" is MALLCTL_ARENAS_ALL.
  if (auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"))) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
  } else {
    malloc_trim(0);
  }
  const int64_t after = resident_bytes();
  return before > after ? before - after : 0;
}

}  // namespace nmt
