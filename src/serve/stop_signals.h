#pragma once

// SIGINT/SIGTERM (and SIGHUP) for a server: caught by handlers that only raise a flag, and acted
// on by one waiting thread, so that a signal starts an orderly drain instead of interrupting
// whichever thread it lands on (core/interrupt.h's flag would also stop a decode in progress).
// Handlers, not a blocked mask: threads that libraries start before main (OpenBLAS's pool)
// never block the signals, and a signal the kernel delivered to one of them took the default
// action and killed the server mid-drain.

#include <functional>

namespace nmt {

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP (whichever thread receives one, it only
/// raises a flag). Call before the model loads, so that a signal meanwhile waits for the drain.
void catch_stop_signals();

/// Waits until SIGINT or SIGTERM arrives (returns its number) or `done()` is true (checked every
/// 100 ms; returns 0); each SIGHUP calls `hangup` (when given) and the wait goes on. After a
/// stop signal SIGINT and SIGTERM get their default actions back, so a second one ends the
/// process at once, and SIGHUP is ignored (a reload during the drain does nothing).
int wait_for_stop_signal(const std::function<bool()>& done,
                         const std::function<void()>& hangup = nullptr);

}  // namespace nmt
