#pragma once

// Runs the real nmt binary (NMT_BINARY) from tests: synchronously through the shell with stdin
// and captured output (run_nmt), or in the background (spawn_nmt, wait_exit_code).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

extern char** environ;

namespace nmt::test {

namespace fs = std::filesystem;

/// The exit code and output of one run of nmt.
struct Run {
  int code;
  std::string out, err;
};

/// Runs `nmt ARGS` through the shell in `dir` (which receives the stdin/stdout/stderr files)
/// with `input` on stdin; returns the exit code and both outputs.
inline Run run_nmt(const std::string& args, const std::string& input, const fs::path& dir) {
  std::ofstream(dir / "stdin", std::ios::binary) << input;
  const std::string command = std::string(NMT_BINARY) + " " + args + " < " +
                              (dir / "stdin").string() + " > " + (dir / "stdout").string() +
                              " 2> " + (dir / "stderr").string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir / "stdout"),
          read_text(dir / "stderr")};
}

/// Runs `args` with the real nmt binary, output to `log`; returns the pid.
inline pid_t spawn_nmt(const std::vector<std::string>& args, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> all = {NMT_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, NMT_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

inline int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace nmt::test
