#include "core/memory.h"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>

namespace nmt {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * int64_t(sysconf(_SC_PAGESIZE));
}

namespace {

using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);

/// jemalloc's mallctl when jemalloc is the process's allocator (the nmt binary links it).
Mallctl jemalloc_mallctl() { return reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl")); }

}  // namespace

int64_t heap_bytes() {
  if (Mallctl mallctl = jemalloc_mallctl()) {
    uint64_t epoch = 1;  // jemalloc's statistics are a snapshot, refreshed by writing "epoch"
    size_t length = sizeof epoch;
    mallctl("epoch", &epoch, &length, &epoch, sizeof epoch);
    size_t allocated = 0;
    length = sizeof allocated;
    if (mallctl("stats.allocated", &allocated, &length, nullptr, 0) != 0) return 0;
    return int64_t(allocated);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return int64_t(info.uordblks + info.hblkhd);  // small blocks in use + mmapped blocks
#else
  return 0;  // mallinfo's int fields wrap past 2 GB: unknown rather than wrong
#endif
}

int64_t memory_limit_bytes() {
  int64_t limit = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t kilobytes = 0;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemTotal:") {
      limit = kilobytes * 1024;
      break;
    }
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // cgroup v2; "max" when unlimited
  int64_t cgroup_limit = 0;
  if (cgroup >> cgroup_limit && cgroup_limit > 0) {
    limit = limit > 0 ? std::min(limit, cgroup_limit) : cgroup_limit;
  }
  return limit;
}

MemoryAction memory_action(int64_t resident, int64_t heap, int64_t stop_at) {
  if (stop_at > 0 && resident > stop_at) return MemoryAction::kStop;
  constexpr int64_t kFreeFloor = int64_t(2) << 30;
  if (heap > 0 && resident - heap > std::max(kFreeFloor, 2 * heap)) {
    return MemoryAction::kReturnFree;
  }
  return MemoryAction::kNone;
}

int64_t return_free_memory() {
  const int64_t before = resident_bytes();
  // "arena.4096" is MALLCTL_ARENAS_ALL.
  if (Mallctl mallctl = jemalloc_mallctl()) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
  } else {
    malloc_trim(0);
  }
  const int64_t after = resident_bytes();
  return before > after ? before - after : 0;
}

}  // namespace nmt
