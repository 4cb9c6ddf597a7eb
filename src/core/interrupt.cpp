#include "core/interrupt.h"

#include <csignal>

namespace nmt {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int signal_number) {
  g_interrupted = 1;
  std::signal(signal_number, SIG_DFL);  // a second Ctrl-C stops at once
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupted() { return g_interrupted != 0; }

void request_interrupt(bool value) { g_interrupted = value ? 1 : 0; }

}  // namespace nmt
