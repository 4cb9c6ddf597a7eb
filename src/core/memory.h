#pragma once

#include <cstdint>

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

}  // namespace nmt
