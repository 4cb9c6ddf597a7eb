#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

/// Aligned sentence pairs: src[i] translates to tgt[i].
struct ParallelText {
  std::vector<std::string> src;
  std::vector<std::string> tgt;
  size_t size() const { return src.size(); }
};

/// Reads one sentence per line from a plain or gzip file (detected by content, not name).
/// Trailing '\r' is removed. Invalid UTF-8 is an nmt::Error naming the file and 1-based line;
/// a missing/unreadable file is an error naming it.
std::vector<std::string> read_lines(const std::filesystem::path& file);

/// Reads both sides; different line counts are an error naming both files and both counts.
ParallelText read_parallel(const std::filesystem::path& src_file,
                           const std::filesystem::path& tgt_file);

/// `<dir>/<split>.<lang>` or `<dir>/<split>.<lang>.gz`, whichever exists (plain first);
/// an error listing both candidates if neither does.
std::filesystem::path split_file(const std::filesystem::path& dir, const std::string& split,
                                 const std::string& lang);

/// True if `text` is valid UTF-8; otherwise `error_offset` gets the first bad byte's offset.
bool valid_utf8(const std::string& text, size_t* error_offset = nullptr);

}  // namespace nmt
