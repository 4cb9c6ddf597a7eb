#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nmt {

/// Removes `path` and everything under it (like `rm -rf`; nothing happens when it does not
/// exist), without following symbolic links. Use it instead of std::filesystem::remove_all:
/// LibTorch 2.x wheels export an std::filesystem::remove_all of their own that crashes when
/// the process binds to it. Throws nmt::Error naming the entry that could not be removed.
void remove_tree(const std::filesystem::path& path);

/// Replaces `path` with `bytes` durably: writes `<path>.tmp`, fsyncs it, renames it over `path`
/// and fsyncs the directory, so after a crash or power loss `path` holds either its old content
/// or all of the new (ext4 can otherwise publish a renamed but empty file). A failure (disk
/// full, file too large, permission denied) is an nmt::Error naming the file and the reason;
/// the temporary file is removed and `path` is left as it was. `what` names the content in the
/// message ("checkpoint", "config file").
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes,
                           const std::string& what);

/// write_file_atomically of the concatenation of `pieces`, written one after another (a large
/// file need not be copied into one buffer first).
void write_file_atomically(const std::filesystem::path& path,
                           const std::vector<std::string_view>& pieces, const std::string& what);

/// CRC-32 (zlib's) of `size` bytes at `data`, continuing `crc` (0 to start); and as 8 hex digits.
uint32_t crc32_update(uint32_t crc, const void* data, size_t size);
std::string crc32_hex(uint32_t crc);

/// Flushes a directory's entries (a rename or unlink inside it) to disk; errors are ignored
/// (some file systems cannot fsync directories).
void sync_directory(const std::filesystem::path& dir);

/// The regular files of `dir` named `<prefix>_<N>.pt` (step_1200.pt, snapshot_7415.pt) with
/// their N, in N order. A name whose N does not fit an int64 is not one nmt writes: skipped.
/// A missing directory has none.
std::vector<std::pair<int64_t, std::filesystem::path>> numbered_files(
    const std::filesystem::path& dir, const std::string& prefix);

/// A stable 64-bit fingerprint (FNV-1a) of `text`, the same on every machine and build.
int64_t fingerprint(const std::string& text);

}  // namespace nmt
