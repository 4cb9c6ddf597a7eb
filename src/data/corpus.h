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
/// A UTF-8 byte order mark and trailing '\r' are removed. A truncated gzip file is an error.
/// Invalid UTF-8 is an nmt::Error naming the file and 1-based line; a missing/unreadable file is an
/// error naming it.
std::vector<std::string> read_lines(const std::filesystem::path& file);

/// Reads both sides; different line counts are an error naming both files and both counts.
ParallelText read_parallel(const std::filesystem::path& src_file,
                           const std::filesystem::path& tgt_file);

/// Reads a tab-separated file: column `src_column` is the source, `tgt_column` the target
/// (0-based; other columns are ignored). A line with too few fields is an nmt::Error naming the
/// file, the line and the counts.
ParallelText read_tsv(const std::filesystem::path& file, int64_t src_column, int64_t tgt_column);

/// Reads one corpus in the configured direction: a split of data.dir (the .<src_lang> file is
/// the source), two files, or a tsv file.
ParallelText read_corpus(const DataConfig& data, const CorpusSpec& corpus);

/// `<dir>/<split>.<lang>` or `<dir>/<split>.<lang>.gz`, whichever exists (plain first);
/// an error listing both candidates if neither does.
std::filesystem::path split_file(const std::filesystem::path& dir, const std::string& split,
                                 const std::string& lang);

/// True if `text` is valid UTF-8; otherwise `error_offset` gets the first bad byte's offset.
bool valid_utf8(const std::string& text, size_t* error_offset = nullptr);

/// The characters (Unicode code points) of UTF-8 `text`: its bytes less the continuation bytes
/// (10xxxxxx).
size_t utf8_characters(const std::string& text);

}  // namespace nmt
