#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

/// Reads a plain or gzip file (detected by content, not name) one line at a time, holding only
/// a buffer of it: corpora of millions of lines are never held whole. Lines as read_lines gives
/// them: split on '\n' (a final newline starts no extra line), a UTF-8 byte order mark and a
/// trailing '\r' removed. A missing file, a directory, a truncated or corrupt gzip file and
/// invalid UTF-8 (with the 1-based line) are nmt::Errors naming the file.
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& file);
  ~LineReader();
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;

  /// The next line into `line`; false (and `line` untouched) at the end of the file.
  bool next(std::string& line);
  /// Lines returned so far.
  size_t lines() const { return lines_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Source;
  /// Appends the next chunk of the file to buffer_; false at its end.
  bool refill();
  std::filesystem::path file_;
  std::unique_ptr<Source> source_;
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  size_t lines_ = 0;
};

/// Reads the sentence pairs of one corpus one at a time, in the configured direction: a split
/// of data.dir, two aligned files or a tsv file (as read_corpus, with the same errors).
class PairReader {
 public:
  PairReader(const DataConfig& data, const CorpusSpec& corpus);
  /// Two aligned files.
  PairReader(const std::filesystem::path& src_file, const std::filesystem::path& tgt_file);
  /// A tab-separated file: columns `src_column` and `tgt_column` (0-based).
  PairReader(const std::filesystem::path& tsv, int64_t src_column, int64_t tgt_column);

  /// The next pair; false at the end. Files of different line counts are an nmt::Error naming
  /// both files and both counts; a tsv line with too few fields one naming the file and line.
  bool next(std::string& src, std::string& tgt);
  /// Pairs returned so far.
  size_t pairs() const { return pairs_; }

 private:
  bool next_tsv(std::string& src, std::string& tgt);
  std::vector<LineReader> readers_;  ///< source then target, or the one tsv file
  int64_t src_column_ = 0, tgt_column_ = 1;
  std::string line_;
  std::vector<std::string> fields_;
  size_t pairs_ = 0;
};

/// The file(s) a corpus is read from: the split's two files (source first), the two files, or
/// the tsv file. Errors as split_file for a split without files.
std::vector<std::filesystem::path> corpus_files(const DataConfig& data, const CorpusSpec& corpus);

}  // namespace nmt
