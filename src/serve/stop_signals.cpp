#include "serve/stop_signals.h"

#include <signal.h>

#include <csignal>
#include <ctime>

namespace nmt {
namespace {

volatile std::sig_atomic_t g_stop = 0;     // the stop signal's number, 0 before one
volatile std::sig_atomic_t g_hangups = 0;  // SIGHUPs not yet acted on

extern "C" void on_stop_signal(int signal_number) {
  if (signal_number == SIGHUP) {
    g_hangups = 1;
  } else {
    g_stop = signal_number;
  }
}

void set_action(int signal_number, void (*action)(int)) {
  struct sigaction handler {};
  handler.sa_handler = action;
  sigemptyset(&handler.sa_mask);
  handler.sa_flags = SA_RESTART;  // a read or write under way goes on
  sigaction(signal_number, &handler, nullptr);
}

}  // namespace

void catch_stop_signals() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP})
    set_action(signal_number, on_stop_signal);
}

int wait_for_stop_signal(const std::function<bool()>& done, const std::function<void()>& hangup) {
  const timespec tick{0, 100 * 1000 * 1000};
  while (!done()) {
    if (g_stop != 0) {
      set_action(SIGINT, SIG_DFL);
      set_action(SIGTERM, SIG_DFL);
      set_action(SIGHUP, SIG_IGN);
      return g_stop;
    }
    if (g_hangups != 0) {
      g_hangups = 0;
      if (hangup) hangup();
      continue;
    }
    nanosleep(&tick, nullptr);  // EINTR (a signal came): look again at once
  }
  return 0;
}

}  // namespace nmt
