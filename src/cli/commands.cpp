#include "cli/commands.h"

#include <algorithm>

namespace nmt::cli {
namespace {

std::vector<Command>& registry() {
  static std::vector<Command> table;  // function-local: safe from static-init order issues
  return table;
}

}  // namespace

std::vector<Command> commands() {
  auto sorted = registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  return sorted;
}

bool register_command(const Command& command) {
  registry().push_back(command);
  return true;
}

}  // namespace nmt::cli
