#include "core/memory.h"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace nmt {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * int64_t(sysconf(_SC_PAGESIZE));
}

int64_t anonymous_resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0, file_backed = 0;  // "shared": resident pages of files
  if (!(statm >> size >> resident >> file_backed)) return 0;
  return std::max<int64_t>(0, resident - file_backed) * int64_t(sysconf(_SC_PAGESIZE));
}

int64_t parse_cgroup_memory_limit(const std::string& text) {
  std::istringstream in(text);
  int64_t bytes = 0;
  if (!(in >> bytes) || bytes <= 0) return 0;  // "max" (v2) or nothing: no limit
  // cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712).
  return bytes >= (int64_t(1) << 62) ? 0 : bytes;
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
  // The process's cgroup and those above it (a limit holds for everything below it): "0::/path"
  // in cgroup v2, "N:memory:/path" (or "N:...,memory,...:/path") in v1.
  namespace fs = std::filesystem;
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    const bool v2 = line.compare(0, first, "0") == 0 && controllers == ",,";
    if (!v2 && controllers.find(",memory,") == std::string::npos) continue;
    const fs::path root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char* file = v2 ? "memory.max" : "memory.limit_in_bytes";
    fs::path group = root / fs::path(line.substr(second + 1)).relative_path();
    for (;; group = group.parent_path()) {
      std::ifstream in(group / file);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      if (const int64_t bytes = parse_cgroup_memory_limit(text)) {
        limit = limit > 0 ? std::min(limit, bytes) : bytes;
      }
      if (group == root || !group.has_relative_path() || group.parent_path() == group) break;
    }
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
