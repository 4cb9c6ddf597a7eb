#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/files.h"
#include "spawn_util.h"
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

// What the kernel is asked to do when training writes its files (spm.model, config.json, each
// step_N.pt, last.pt, best.pt), seen by strace: the temporary file is fsynced before its rename
// and the directory after it, so a power loss leaves the old file or the whole new one.
TEST(Files, TrainingSyncsEachFileBeforeItsRenameAndTheDirectoryAfter) {
  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace (scripts/setup.sh) missing";
  const auto dir = test::temp_dir("strace");
  const fs::path run = dir / "run";
  Config config = test::tiny_config(run);
  config.train.max_epochs = 0;
  config.train.max_steps = 4;
  config.train.validate_every = 2;
  save_config(config, dir / "config.json");
  const pid_t pid =
      test::start_program("/usr/bin/strace",
                          {"-f", "-y", "-e", "trace=fsync,rename", "-o", (dir / "trace").string(),
                           NMT_BINARY, "train", "--config", (dir / "config.json").string()},
                          dir / "train.log");
  ASSERT_EQ(test::wait_nmt(pid), 0) << test::slurp(dir / "train.log");
  // One call per line ("PID call(args) = result"); keep the calls that succeeded.
  std::vector<std::string> calls;
  std::ifstream trace(dir / "trace");
  const std::regex call(R"(^\d+ +((fsync|rename)\(.*\)) += 0$)");
  for (std::string line; std::getline(trace, line);) {
    std::smatch m;
    if (std::regex_match(line, m, call)) calls.push_back(m[1]);
  }
  int renames = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string& c = calls[i];
    if (c.rfind("rename(", 0) != 0) continue;
    ++renames;
    const auto quote = c.find('"', 8);  // rename("<dir>/<name>.tmp", "<dir>/<name>")
    const std::string tmp = c.substr(8, quote - 8);
    ASSERT_GT(i, 0u) << c;
    EXPECT_NE(calls[i - 1].find("<" + tmp + ">"), std::string::npos) << "before " << c;
    ASSERT_LT(i + 1, calls.size()) << c;
    EXPECT_NE(calls[i + 1].find("<" + fs::path(tmp).parent_path().string() + ">)"),
              std::string::npos)
        << "after " << c;
  }
  // spm.model, config.json, then per validation (steps 2 and 4) step_N.pt, last.pt and best.pt
  // or only some of them: at least the two step checkpoints and a final last.pt.
  EXPECT_GE(renames, 5) << test::slurp(dir / "trace");
}

// The one listing of step_N.pt / snapshot_N.pt files (checkpoint rotation, snapshots, resume):
// numeric order, and names nmt never writes (a directory, a number beyond int64, other
// prefixes) are left out instead of throwing.
TEST(Files, NumberedFilesInNumericOrderSkippingWhatIsNotOurs) {
  const auto dir = test::temp_dir("numbered_files");
  for (const char* name :
       {"step_10.pt", "step_9.pt", "step_100.pt", "step_99999999999999999999.pt", "step_.pt",
        "step_1.pt.tmp", "steps_3.pt", "snapshot_4.pt", "step_x.pt"}) {
    std::ofstream(dir / name) << "x";
  }
  fs::create_directory(dir / "step_5.pt");
  std::vector<std::string> names;
  std::vector<int64_t> numbers;
  for (const auto& [number, path] : numbered_files(dir, "step")) {
    numbers.push_back(number);
    names.push_back(path.filename().string());
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{9, 10, 100}));
  EXPECT_EQ(names, (std::vector<std::string>{"step_9.pt", "step_10.pt", "step_100.pt"}));
  EXPECT_EQ(numbered_files(dir, "snapshot").size(), 1u);
  EXPECT_TRUE(numbered_files(dir / "missing", "step").empty());
}

}  // namespace
}  // namespace nmt
