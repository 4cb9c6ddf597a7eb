#include "data/corpus.h"

#include <algorithm>

#include "core/error.h"
#include "data/line_reader.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

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

size_t utf8_characters(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::vector<std::string> read_lines(const fs::path& file) {
  LineReader reader(file);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(std::move(line));
  return lines;
}

namespace {

ParallelText read_all_pairs(PairReader reader) {
  ParallelText text;
  std::string src, tgt;
  while (reader.next(src, tgt)) {
    text.src.push_back(std::move(src));
    text.tgt.push_back(std::move(tgt));
  }
  return text;
}

}  // namespace

ParallelText read_parallel(const fs::path& src_file, const fs::path& tgt_file) {
  return read_all_pairs(PairReader(src_file, tgt_file));
}

ParallelText read_tsv(const fs::path& file, int64_t src_column, int64_t tgt_column) {
  return read_all_pairs(PairReader(file, src_column, tgt_column));
}

ParallelText read_corpus(const DataConfig& data, const CorpusSpec& corpus) {
  return read_all_pairs(PairReader(data, corpus));
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
