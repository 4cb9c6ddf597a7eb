#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace nmt {

/// A whole file mapped read-only into memory (POSIX mmap). Pages are read from the file when
/// first touched and may be dropped again by the kernel under memory pressure, so a large file
/// costs address space, not resident memory. The mapping lives as long as the object; the file
/// may be replaced (renamed over) meanwhile without changing what the mapping shows.
class MappedFile {
 public:
  /// Maps `path`; a missing or unreadable file is an nmt::Error naming it. An empty file maps to
  /// size() 0 and data() null.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nmt
