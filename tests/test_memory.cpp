// core/memory.h: pages a program freed go back to the kernel when asked, and the heap's bytes in
// use are counted, with glibc's malloc (this binary's) and with jemalloc (the nmt binary's,
// preloaded into a child run of this test); the rule long runs follow.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/memory.h"
#include "test_util.h"

namespace nmt {
namespace {

// 48 MB in 64 KB blocks (below glibc's mmap threshold, a large size class in jemalloc), touched
// and freed but for the last block, which keeps glibc's heap from shrinking by itself.
TEST(Memory, FreedPagesGoBackWhenAsked) {
  if (test::asan_allocator()) GTEST_SKIP() << "an ASan build allocates through the sanitizer";
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

// 64 MB allocated and touched counts in the heap, and stops counting once freed.
TEST(Memory, HeapBytesCountWhatIsAllocated) {
  if (test::asan_allocator()) GTEST_SKIP() << "an ASan build allocates through the sanitizer";
  constexpr size_t kBlock = 64 << 10, kBlocks = 1024;
  const int64_t before = heap_bytes();
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    for (size_t at = 0; at < kBlock; at += 4096) blocks.back()[at] = char(i);
  }
  const int64_t held = heap_bytes();
  for (char* block : blocks) std::free(block);
  const int64_t after = heap_bytes();
  EXPECT_GT(before, 0);
  EXPECT_GE(held - before, int64_t(60) << 20);
  EXPECT_LE(after - before, int64_t(4) << 20);
}

TEST(Memory, ActionReturnsFreePagesPastTwiceTheHeapAndStopsPastTheLimit) {
  constexpr int64_t GB = int64_t(1) << 30;
  EXPECT_EQ(memory_action(10 * GB, 1 * GB, 9 * GB), MemoryAction::kStop);
  EXPECT_EQ(memory_action(9 * GB, 8 * GB, 9 * GB), MemoryAction::kNone);   // at the limit, not past
  EXPECT_EQ(memory_action(5 * GB, 1 * GB, 0), MemoryAction::kReturnFree);  // 4 GB free > 2 GB
  EXPECT_EQ(memory_action(5 * GB, 1 * GB, 20 * GB), MemoryAction::kReturnFree);
  EXPECT_EQ(memory_action(GB * 5 / 2, 1 * GB, 0), MemoryAction::kNone);  // 1.5 GB free < 2 GB
  EXPECT_EQ(memory_action(8 * GB, 3 * GB, 0), MemoryAction::kNone);      // 5 GB free < 2 x heap
  EXPECT_EQ(memory_action(8 * GB, 0, 0), MemoryAction::kNone);           // heap unknown
}

TEST(Memory, LimitIsTheHostsMemoryOrACgroupsLower) {
  const int64_t limit = memory_limit_bytes();
  EXPECT_GT(limit, resident_bytes());
  EXPECT_LE(limit, int64_t(1) << 50);                // not a cgroup's "no limit" taken as a number
  EXPECT_EQ(parse_cgroup_memory_limit("max\n"), 0);  // v2: no limit
  EXPECT_EQ(parse_cgroup_memory_limit("9223372036854771712\n"), 0);  // v1: no limit
  EXPECT_EQ(parse_cgroup_memory_limit(""), 0);                       // no file
  EXPECT_EQ(parse_cgroup_memory_limit("1073741824\n"), 1073741824);  // 1 GiB
}

// The process's own memory leaves out the pages of files it maps (a training corpus).
TEST(Memory, OwnMemoryLeavesOutMappedFiles) {
  const auto dir = test::temp_dir("own_memory");
  const auto path = dir / "mapped";
  constexpr size_t kBytes = 64 << 20;
  { std::ofstream(path, std::ios::binary) << std::string(kBytes, 'x'); }
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto* data = static_cast<const char*>(mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0));
  ASSERT_NE(data, MAP_FAILED);
  const int64_t own_before = anonymous_resident_bytes(), all_before = resident_bytes();
  int64_t sum = 0;
  for (size_t at = 0; at < kBytes; at += 4096) sum += data[at];
  const int64_t own_after = anonymous_resident_bytes(), all_after = resident_bytes();
  munmap(const_cast<char*>(data), kBytes);
  close(fd);
  EXPECT_EQ(sum, int64_t('x') * int64_t(kBytes / 4096));
  EXPECT_GE(all_after - all_before, int64_t(60) << 20);
  EXPECT_LT(own_after - own_before, int64_t(8) << 20);
  EXPECT_GT(own_after, 0);
}

#ifdef NMT_JEMALLOC_LIBRARY
TEST(Memory, FreedPagesGoBackAndHeapBytesCountUnderJemalloc) {
  if (test::asan_allocator()) GTEST_SKIP() << "an ASan build allocates through the sanitizer";
  const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  // jemalloc as the nmt binary configures it: freed pages are kept, never decayed away.
  const std::string command =
      "LD_PRELOAD='" + std::string(NMT_JEMALLOC_LIBRARY) +
      "' MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 '" + self +
      "' --gtest_filter=Memory.FreedPagesGoBackWhenAsked:Memory.HeapBytesCountWhatIsAllocated "
      ">/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}
#endif

}  // namespace
}  // namespace nmt
