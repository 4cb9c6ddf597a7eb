#pragma once

namespace nmt {

/// Installs SIGINT/SIGTERM handlers that only raise a flag, so long work can finish its current
/// step, save, and return. A second signal restores the default action (a hard stop).
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has been received (or request_interrupt() called).
bool interrupted();

/// Raises the flag by hand (tests) or clears it (`false`).
void request_interrupt(bool value = true);

}  // namespace nmt
