#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/files.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

TEST(Files, RemoveTreeRemovesNestedEntriesButNotWhatLinksPointTo) {
  const auto dir = test::temp_dir("remove_tree");
  const auto keep = test::temp_dir("remove_tree_keep");
  std::ofstream(keep / "kept.txt") << "stays";
  fs::create_directories(dir / "run" / "a" / "b");
  std::ofstream(dir / "run" / "a" / "b" / "file.txt") << "x";
  std::ofstream(dir / "run" / "top.txt") << "y";
  fs::create_directory_symlink(keep, dir / "run" / "link");
  remove_tree(dir / "run");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "run")));
  EXPECT_TRUE(fs::exists(keep / "kept.txt"));
  EXPECT_NO_THROW(remove_tree(dir / "run"));  // already gone: nothing to do
  remove_tree(keep);
}

TEST(Files, RemoveTreeNamesTheEntryItCannotRemove) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may remove entries of a read-only directory";
  const auto dir = test::temp_dir("remove_tree_locked");
  fs::create_directories(dir / "run" / "locked");
  std::ofstream(dir / "run" / "locked" / "file.txt") << "x";
  fs::permissions(dir / "run" / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  test::expect_error([&] { remove_tree(dir / "run"); }, "file.txt: cannot remove");
  fs::permissions(dir / "run" / "locked", fs::perms::owner_all);
  remove_tree(dir);
}

// The same error where root cannot remove either: procfs refuses every unlink, so remove_tree
// stops at the first entry it visits (depth first) and names it.
TEST(Files, RemoveTreeNamesAnEntryTheKernelRefusesToRemove) {
  ASSERT_TRUE(fs::exists("/proc/self/fdinfo"));
  test::expect_error([] { remove_tree("/proc/self/fdinfo"); }, "/proc/self/fdinfo/");
  test::expect_error([] { remove_tree("/proc/self/fdinfo"); }, ": cannot remove (");
}

}  // namespace
}  // namespace nmt
