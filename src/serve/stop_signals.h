#pragma once

// SIGINT/SIGTERM (and SIGHUP) for a server: blocked in every thread and received by one waiting
// thread, so that a signal starts an orderly drain instead of interrupting whichever thread it
// lands on (core/interrupt.h's flag would also stop a decode in progress).

#include <functional>

namespace nmt {

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and so in every thread it starts
/// afterwards. Call before any thread is started (the model's thread pools included).
void block_stop_signals();

/// Waits until SIGINT or SIGTERM arrives (returns its number) or `done()` is true (checked every
/// 100 ms; returns 0); each SIGHUP calls `hangup` (when given) and the wait goes on. After a
/// stop signal this thread unblocks SIGINT and SIGTERM with their default actions, so a second
/// one ends the process at once.
int wait_for_stop_signal(const std::function<bool()>& done,
                         const std::function<void()>& hangup = nullptr);

}  // namespace nmt
