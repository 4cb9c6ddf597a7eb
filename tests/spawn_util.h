#pragma once

// Runs the real nmt binary (NMT_BINARY) in a child process for the fault and bad-input tests:
// output captured to a file, optional stdin file and file-size limit, and a deadline after which
// the child is killed and the test fails (nothing may hang).

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace nmt::test {

struct SpawnOptions {
  std::filesystem::path stdin_file;  ///< empty: /dev/null
  long file_size_limit = -1;         ///< RLIMIT_FSIZE in bytes for the child; -1: none
};

/// Starts `program args...` with stdout and stderr going to `log`; returns the pid.
inline pid_t start_program(const std::string& program, const std::vector<std::string>& args,
                           const std::filesystem::path& log, const SpawnOptions& options = {}) {
  std::vector<std::string> all = {program};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string in = options.stdin_file.empty() ? "/dev/null" : options.stdin_file.string();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int input = ::open(in.c_str(), O_RDONLY);
    if (out < 0 || input < 0) ::_exit(126);
    ::dup2(input, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (options.file_size_limit >= 0) {
      const rlimit limit{rlim_t(options.file_size_limit), rlim_t(options.file_size_limit)};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  EXPECT_GT(pid, 0) << "fork failed";
  return pid;
}

/// Starts `nmt args...` (the binary under test).
inline pid_t start_nmt(const std::vector<std::string>& args, const std::filesystem::path& log,
                       const SpawnOptions& options = {}) {
  return start_program(NMT_BINARY, args, log, options);
}

/// Waits for `pid` at most `timeout_s` seconds; returns its exit code, 128 + signal if a signal
/// ended it, or -1 (after killing it) if it was still running: a hang.
inline int wait_nmt(pid_t pid, double timeout_s = 120) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "nmt did not finish within " << timeout_s << " s (killed)";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The outcome of one nmt run.
struct NmtRun {
  int code = 0;
  std::string output;  ///< stdout and stderr together
};

/// Runs `nmt args...` to the end (at most `timeout_s`), output into `dir`/`name`.log.
inline NmtRun run_nmt(const std::vector<std::string>& args, const std::filesystem::path& dir,
                      const std::string& name, const SpawnOptions& options = {},
                      double timeout_s = 120) {
  const auto log = dir / (name + ".log");
  const pid_t pid = start_nmt(args, log, options);
  NmtRun run;
  run.code = wait_nmt(pid, timeout_s);
  run.output = slurp(log);
  return run;
}

}  // namespace nmt::test
