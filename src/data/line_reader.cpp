#include "data/line_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/languages.h"
#include "data/corpus.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadChunk = size_t(1) << 16;

}  // namespace

/// The open file, through zlib whether it is gzip or plain: zlib recognises gzip by its magic
/// bytes 1f 8b (RFC 1952 §2.3.1), not by the name, so a misnamed file still reads, and reads a
/// plain file as it is. One open and no look-ahead of our own, so a pipe (/dev/stdin, <(...))
/// reads whole.
struct LineReader::Source {
  gzFile gz = nullptr;
  uint64_t bytes = 0;  ///< (decompressed) bytes read so far
  ~Source() {
    if (gz != nullptr) gzclose(gz);
  }
};

LineReader::LineReader(const fs::path& file) : file_(file), source_(std::make_unique<Source>()) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw Error("file not found: '" + file.string() + "'");
  if (fs::is_directory(file, ec)) {
    throw Error("'" + file.string() + "' is a directory, expected a text or .gz file");
  }
  errno = 0;
  source_->gz = gzopen(file.c_str(), "rb");
  if (source_->gz == nullptr) {
    throw Error("cannot open '" + file.string() +
                "': " + (errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(source_->gz, unsigned(kReadChunk));
  // A UTF-8 byte order mark is an encoding marker, not text.
  while (buffer_.size() < 3 && refill()) {
  }
  if (buffer_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
}

LineReader::~LineReader() = default;
LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;

bool LineReader::refill() {
  if (eof_) return false;
  const size_t at = buffer_.size();
  buffer_.resize(at + kReadChunk);
  const int n = gzread(source_->gz, &buffer_[at], unsigned(kReadChunk));
  if (n < 0) {
    int code = 0;
    const char* message = gzerror(source_->gz, &code);
    if (code == Z_ERRNO) {
      throw Error("error while reading '" + file_.string() + "': " + std::strerror(errno));
    }
    throw Error("'" + file_.string() + "' is not a valid gzip file: " + message);
  }
  const auto got = size_t(n);
  if (got == 0) {
    // gzread returns what it could decompress and then 0 when the input ends early; only the
    // error state (Z_BUF_ERROR, "unexpected end of file") tells a truncated file from a whole.
    int code = 0;
    const char* message = gzerror(source_->gz, &code);
    if (code != Z_OK) {
      throw Error("'" + file_.string() + "' is a truncated or corrupt gzip file (" + message +
                  ") after " + std::to_string(source_->bytes) + " bytes");
    }
  }
  buffer_.resize(at + got);
  source_->bytes += got;
  if (got == 0) eof_ = true;
  return got > 0;
}

bool LineReader::next(std::string& line) {
  size_t end = std::string::npos;
  for (size_t searched = pos_;;) {
    end = buffer_.find('\n', searched);
    if (end != std::string::npos) break;
    if (eof_) {
      if (pos_ >= buffer_.size()) return false;
      end = buffer_.size();
      break;
    }
    buffer_.erase(0, pos_);  // keep only the line under way
    pos_ = 0;
    searched = buffer_.size();
    refill();
  }
  size_t stop = end;
  if (stop > pos_ && buffer_[stop - 1] == '\r') --stop;
  line.assign(buffer_, pos_, stop - pos_);
  pos_ = std::min(end + 1, buffer_.size());
  ++lines_;
  size_t bad = 0;
  if (!valid_utf8(line, &bad)) {
    throw Error("'" + file_.string() + "' line " + std::to_string(lines_) +
                ": invalid UTF-8 at byte " + std::to_string(bad + 1) +
                " of the line (the reader expects UTF-8 text)");
  }
  return true;
}

PairReader::PairReader(const DataConfig& data, const CorpusSpec& corpus) {
  const auto files = corpus_files(data, corpus);
  for (const auto& file : files) readers_.emplace_back(file);
  src_column_ = corpus.src_column;
  tgt_column_ = corpus.tgt_column;
}

PairReader::PairReader(const fs::path& src_file, const fs::path& tgt_file) {
  readers_.emplace_back(src_file);
  readers_.emplace_back(tgt_file);
}

PairReader::PairReader(const fs::path& tsv, int64_t src_column, int64_t tgt_column)
    : src_column_(src_column), tgt_column_(tgt_column) {
  readers_.emplace_back(tsv);
}

bool PairReader::next(std::string& src, std::string& tgt) {
  if (readers_.size() == 1) return next_tsv(src, tgt);
  const bool has_src = readers_[0].next(src);
  const bool has_tgt = readers_[1].next(tgt);
  if (has_src != has_tgt) {
    // Count the rest of the longer file, so the message gives both counts.
    LineReader& longer = has_src ? readers_[0] : readers_[1];
    while (longer.next(line_)) {
    }
    throw Error("misaligned parallel files: '" + readers_[0].file().string() + "' has " +
                std::to_string(readers_[0].lines()) + " lines but '" + readers_[1].file().string() +
                "' has " + std::to_string(readers_[1].lines()) +
                " (line i of one must translate line i of the other)");
  }
  pairs_ += has_src;
  return has_src;
}

bool PairReader::next_tsv(std::string& src, std::string& tgt) {
  LineReader& reader = readers_[0];
  if (!reader.next(line_)) return false;
  const auto needed = static_cast<size_t>(std::max(src_column_, tgt_column_) + 1);
  fields_.clear();
  for (size_t start = 0;;) {
    const size_t tab = line_.find('\t', start);
    fields_.push_back(line_.substr(start, tab == std::string::npos ? tab : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  if (fields_.size() < needed) {
    throw Error("'" + reader.file().string() + "' line " + std::to_string(reader.lines()) + ": " +
                std::to_string(fields_.size()) + " tab-separated field(s), but columns " +
                std::to_string(src_column_) + " (source) and " + std::to_string(tgt_column_) +
                " (target) need at least " + std::to_string(needed));
  }
  src = std::move(fields_[size_t(src_column_)]);
  tgt = std::move(fields_[size_t(tgt_column_)]);
  ++pairs_;
  return true;
}

std::vector<fs::path> corpus_files(const DataConfig& data, const CorpusSpec& corpus) {
  switch (corpus.kind) {
    case CorpusKind::kFiles:
      return {corpus.src, corpus.tgt};
    case CorpusKind::kTsv:
      return {corpus.tsv};
    case CorpusKind::kSplit:
      break;
  }
  const LanguagePair pair = corpus_pair(data, corpus);
  return {split_file(data.dir, corpus.split, pair.src),
          split_file(data.dir, corpus.split, pair.tgt)};
}

}  // namespace nmt
