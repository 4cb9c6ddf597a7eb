#pragma once

#include <filesystem>

namespace nmt {

/// Removes `path` and everything under it (like `rm -rf`; nothing happens when it does not
/// exist), without following symbolic links. Use it instead of std::filesystem::remove_all:
/// LibTorch 2.x wheels export an std::filesystem::remove_all of their own that crashes when
/// the process binds to it. Throws nmt::Error naming the entry that could not be removed.
void remove_tree(const std::filesystem::path& path);

}  // namespace nmt
