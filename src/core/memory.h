#pragma once

#include <cstdint>
#include <string>

namespace nmt {

/// Hands the pages the allocator holds free back to the kernel, once, after a large release (a
/// decoding model's float weights once its twins exist, the buffers of loading a checkpoint).
/// jemalloc (the nmt binary's allocator, CMakeLists.txt) keeps freed pages for reuse by the
/// thread's own arena, and decoding workers allocate from theirs, so without this those pages
/// stay in the peak RSS unused. Purges every jemalloc arena when jemalloc is the process's
/// allocator (found at run time, so the library and its tests need not link it), glibc's
/// malloc_trim otherwise. Returns the bytes of resident memory it gave back (0 when unknown).
int64_t return_free_memory();

/// The process's resident set size now, in bytes (/proc/self/statm; 0 when unreadable).
int64_t resident_bytes();

/// The part of it that is the process's own (anonymous) memory: less the resident pages of
/// files, such as a memory-mapped training corpus, which the kernel can drop at will.
int64_t anonymous_resident_bytes();

/// The bytes the program holds allocated now: jemalloc's stats.allocated when jemalloc is the
/// process's allocator, glibc's in-use bytes (mallinfo2) otherwise; 0 when unknown. What
/// resident_bytes() holds beyond this is mostly pages the allocator keeps free for reuse.
int64_t heap_bytes();

/// The memory this process can have: the host's MemTotal (/proc/meminfo), or the lowest memory
/// limit of its cgroup and those above it where lower (v2 memory.max, v1
/// memory.limit_in_bytes); 0 when unknown.
int64_t memory_limit_bytes();

/// A cgroup memory limit file's bytes: 0 for none ("max", v1's near-2^63, unreadable text).
int64_t parse_cgroup_memory_limit(const std::string& text);

/// What a long-running loop does about its memory at a point of its own choosing (training's log
/// points), from the numbers above.
enum class MemoryAction {
  kNone,
  kReturnFree,  ///< the allocator holds much free: return_free_memory(), then ask again
  kStop,        ///< resident over the limit: stop, saving the work
};

/// The rule (pure, for tests), on anonymous_resident_bytes() as `resident`: kStop when it is over
/// `stop_at` (when that is > 0); else kReturnFree when the allocator holds over
/// max(2 GB, 2 x heap) free (resident - heap, with `heap` known); else kNone. Training's stop_at is
/// train.max_memory_gb, by default 90% of memory_limit_bytes() over the ranks on the machine.
MemoryAction memory_action(int64_t resident, int64_t heap, int64_t stop_at);

}  // namespace nmt
