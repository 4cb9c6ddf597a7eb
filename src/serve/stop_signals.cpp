#include "serve/stop_signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace nmt {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int wait_for_stop_signal(const std::function<bool()>& done, const std::function<void()>& hangup) {
  const sigset_t set = stop_set();
  const timespec tick{0, 100 * 1000 * 1000};
  while (!done()) {
    const int signal_number = sigtimedwait(&set, nullptr, &tick);
    if (signal_number == SIGHUP) {
      if (hangup) hangup();
      continue;
    }
    if (signal_number > 0) {
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      sigset_t stops;  // SIGHUP stays blocked: a reload during the drain does nothing
      sigemptyset(&stops);
      sigaddset(&stops, SIGINT);
      sigaddset(&stops, SIGTERM);
      pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
      return signal_number;
    }
    // EAGAIN: the tick passed; EINTR: another signal; either way look again.
  }
  return 0;
}

}  // namespace nmt
