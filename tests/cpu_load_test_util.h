#pragma once

// Keeps the processors busy from other processes, as another user's work would: children that
// spin until a deadline, for the tests of core/cpu_load.h and of what "auto" makes of a busy host.

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vector>

namespace nmt::test {

/// `count` child processes, each spinning on one core for `seconds`; the destructor waits for
/// them (and kills any still spinning).
class Spinners {
 public:
  Spinners(int count, double seconds) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {  // only async-signal-safe calls: clock_gettime and _exit
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        const double until = double(now.tv_sec) + now.tv_nsec / 1e9 + seconds;
        volatile double sink = 0.0;
        do {
          for (int k = 0; k < 100000; ++k) sink = sink + k;
          ::clock_gettime(CLOCK_MONOTONIC, &now);
        } while (double(now.tv_sec) + now.tv_nsec / 1e9 < until);
        ::_exit(0);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  Spinners(const Spinners&) = delete;
  Spinners& operator=(const Spinners&) = delete;
  ~Spinners() {
    for (const pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  /// Waits for every child to finish its spinning.
  void wait() {
    for (const pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
    pids_.clear();
  }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace nmt::test
