// core/memory.h: pages a program freed go back to the kernel when asked, with glibc's malloc (this
// binary's) and with jemalloc (the nmt binary's, preloaded into a child run of this test).

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/memory.h"

namespace nmt {
namespace {

/// Whether AddressSanitizer's allocator serves malloc here (a sanitized nmt_core links its
/// run time into this binary, whose own sources are built without the flag): it keeps freed
/// blocks in its quarantine, so nothing can be given back.
bool asan_allocator() { return dlsym(RTLD_DEFAULT, "__asan_init") != nullptr; }

// 48 MB in 64 KB blocks (below glibc's mmap threshold, a large size class in jemalloc), touched
// and freed but for the last block, which keeps glibc's heap from shrinking by itself.
TEST(Memory, FreedPagesGoBackWhenAsked) {
  if (asan_allocator()) GTEST_SKIP() << "an ASan build allocates through the sanitizer";
  constexpr size_t kBlock = 64 << 10, kBlocks = 768;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    for (size_t at = 0; at < kBlock; at += 4096) blocks.back()[at] = char(i);
  }
  for (size_t i = 0; i + 1 < kBlocks; ++i) std::free(blocks[i]);
  const int64_t given_back = return_free_memory();
  std::free(blocks.back());
  EXPECT_GT(given_back, int64_t(32) << 20);
  EXPECT_GT(resident_bytes(), 0);
}

#ifdef NMT_JEMALLOC_LIBRARY
TEST(Memory, FreedPagesGoBackWhenAskedUnderJemalloc) {
  if (asan_allocator()) GTEST_SKIP() << "an ASan build allocates through the sanitizer";
  const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  // jemalloc as the nmt binary configures it: freed pages are kept, never decayed away.
  const std::string command = "LD_PRELOAD='" + std::string(NMT_JEMALLOC_LIBRARY) +
                              "' MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 '" + self +
                              "' --gtest_filter=Memory.FreedPagesGoBackWhenAsked >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}
#endif

}  // namespace
}  // namespace nmt
