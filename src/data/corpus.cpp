#include "data/corpus.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "core/error.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// Reads the whole file into memory: the corpora this trainer targets are megabytes, and one
/// buffer keeps line splitting and UTF-8 checking simple and fast.
std::string read_plain(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw Error("cannot open '" + file.string() + "': " + std::strerror(errno));
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("error while reading '" + file.string() + "'");
  return data;
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

/// Decompresses a gzip file (concatenated members included, as gzread handles them).
std::string read_gzip(const fs::path& file) {
  std::unique_ptr<gzFile_s, GzCloser> in(gzopen(file.c_str(), "rb"));
  if (!in) throw Error("cannot open '" + file.string() + "': " + std::strerror(errno));
  std::string data;
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const int n = gzread(in.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(in.get(), &code);
      throw Error("'" + file.string() + "' is not a valid gzip file: " + message);
    }
    if (n == 0) break;
    data.append(buffer.data(), static_cast<size_t>(n));
  }
  // gzread returns what it could decompress and then 0 when the input ends early; only the
  // error state (Z_BUF_ERROR, "unexpected end of file") tells a truncated file from a whole one.
  int code = 0;
  const char* message = gzerror(in.get(), &code);
  if (code != Z_OK) {
    throw Error("'" + file.string() + "' is a truncated or corrupt gzip file (" + message +
                ") after " + std::to_string(data.size()) + " bytes");
  }
  return data;
}

/// Gzip is recognised by its magic bytes 1f 8b (RFC 1952 §2.3.1), not by the name, so a
/// misnamed file still reads.
bool has_gzip_magic(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

/// Splits on '\n' (a final newline does not start an extra empty line), drops a trailing '\r'
/// and validates each line's UTF-8.
std::vector<std::string> split_lines(const std::string& data, const fs::path& file) {
  std::vector<std::string> lines;
  size_t start = 0;
  // A UTF-8 byte order mark is an encoding marker, not text.
  if (data.compare(0, 3, "\xEF\xBB\xBF") == 0) start = 3;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    size_t stop = end;
    if (stop > start && data[stop - 1] == '\r') --stop;
    std::string line = data.substr(start, stop - start);
    size_t bad = 0;
    if (!valid_utf8(line, &bad)) {
      throw Error("'" + file.string() + "' line " + std::to_string(lines.size() + 1) +
                  ": invalid UTF-8 at byte " + std::to_string(bad + 1) +
                  " of the line (the reader expects UTF-8 text)");
    }
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

}  // namespace

bool valid_utf8(const std::string& text, size_t* error_offset) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  auto fail = [&] {
    if (error_offset) *error_offset = i;
    return false;
  };
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629 §4)
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return fail();
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return fail();
    for (size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return fail();
    }
    i += len;
  }
  return true;
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw Error("file not found: '" + file.string() + "'");
  }
  if (fs::is_directory(file, ec)) {
    throw Error("'" + file.string() + "' is a directory, expected a text or .gz file");
  }
  return split_lines(has_gzip_magic(file) ? read_gzip(file) : read_plain(file), file);
}

ParallelText read_parallel(const fs::path& src_file, const fs::path& tgt_file) {
  ParallelText text;
  text.src = read_lines(src_file);
  text.tgt = read_lines(tgt_file);
  if (text.src.size() != text.tgt.size()) {
    throw Error("misaligned parallel files: '" + src_file.string() + "' has " +
                std::to_string(text.src.size()) + " lines but '" + tgt_file.string() + "' has " +
                std::to_string(text.tgt.size()) +
                " (line i of one must translate line i of the other)");
  }
  return text;
}

ParallelText read_tsv(const fs::path& file, int64_t src_column, int64_t tgt_column) {
  const auto needed = static_cast<size_t>(std::max(src_column, tgt_column) + 1);
  ParallelText text;
  std::vector<std::string> lines = read_lines(file);
  text.src.reserve(lines.size());
  text.tgt.reserve(lines.size());
  std::vector<std::string> fields;
  for (size_t i = 0; i < lines.size(); ++i) {
    fields.clear();
    for (size_t start = 0;;) {
      const size_t tab = lines[i].find('\t', start);
      fields.push_back(lines[i].substr(start, tab == std::string::npos ? tab : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (fields.size() < needed) {
      throw Error("'" + file.string() + "' line " + std::to_string(i + 1) + ": " +
                  std::to_string(fields.size()) + " tab-separated field(s), but columns " +
                  std::to_string(src_column) + " (source) and " + std::to_string(tgt_column) +
                  " (target) need at least " + std::to_string(needed));
    }
    text.src.push_back(std::move(fields[size_t(src_column)]));
    text.tgt.push_back(std::move(fields[size_t(tgt_column)]));
  }
  return text;
}

ParallelText read_corpus(const DataConfig& data, const CorpusSpec& corpus) {
  switch (corpus.kind) {
    case CorpusKind::kFiles:
      return read_parallel(corpus.src, corpus.tgt);
    case CorpusKind::kTsv:
      return read_tsv(corpus.tsv, corpus.src_column, corpus.tgt_column);
    case CorpusKind::kSplit:
      break;
  }
  return read_parallel(split_file(data.dir, corpus.split, data.src_lang),
                       split_file(data.dir, corpus.split, data.tgt_lang));
}

fs::path split_file(const fs::path& dir, const std::string& split, const std::string& lang) {
  const fs::path plain = dir / (split + "." + lang);
  const fs::path gz = dir / (split + "." + lang + ".gz");
  std::error_code ec;
  if (fs::is_regular_file(plain, ec)) return plain;
  if (fs::is_regular_file(gz, ec)) return gz;
  throw Error("no file for split '" + split + "', language '" + lang + "': neither '" +
              plain.string() + "' nor '" + gz.string() +
              "' exists (check data.dir; scripts/get_multi30k.sh fetches Multi30k)");
}

}  // namespace nmt
