#pragma once

#include <stdexcept>
#include <string>

namespace nmt {

/// The one exception type the library throws for bad input (files, config, arguments).
/// Its message names the file, line, key or value and says what would be valid; `main` prints
/// it as a single line and exits non-zero. Tensor invariants use TORCH_CHECK instead.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nmt
