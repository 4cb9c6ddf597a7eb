#pragma once

#include <vector>

namespace nmt::cli {

/// One subcommand: `nmt <name> ...`. `run` receives the arguments after the name (argv[0] is
/// "nmt <name>") and returns the exit code; errors are thrown and reported once by main().
struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
  int order;  ///< position in `nmt --help`
};

/// Every registered subcommand, sorted by `order`.
std::vector<Command> commands();

/// Registers a subcommand; each cmd_*.cpp does so from a static initializer:
///   static const bool registered = register_command({"train", "...", run_train, 20});
bool register_command(const Command& command);

}  // namespace nmt::cli
