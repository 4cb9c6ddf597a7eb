#pragma once

// Corpora for the own-data tests: gzip in memory, a made-up xx->yy language pair, and a
// SentencePiece model with SentencePiece's default special ids (which nmt must refuse).

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sentencepiece_trainer.h>

#include <gtest/gtest.h>

namespace nmt::test {

/// `text` gzip-compressed (one member), as `gzip` writes it.
inline std::string gzip(const std::string& text) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&stream, uLong(text.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = uInt(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

/// Trains `<prefix>.model` on `input` with SentencePiece's own default ids (unk 0, bos 1,
/// eos 2, no pad): a model from elsewhere that nmt cannot use as is.
inline void write_foreign_spm_model(const std::filesystem::path& input,
                                    const std::filesystem::path& prefix) {
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + input.string() + " --model_prefix=" + prefix.string() +
      " --vocab_size=60 --hard_vocab_limit=false --num_threads=1 --minloglevel=2");
  EXPECT_TRUE(status.ok()) << status.ToString();
}

/// A made-up language pair: source sentences of "xx" words and their "yy" translations
/// (each word w -> its letters reversed and doubled), deterministic, `pairs` lines.
struct MadeUpCorpus {
  std::vector<std::string> src;
  std::vector<std::string> tgt;
};

inline MadeUpCorpus made_up_corpus(size_t pairs, size_t offset = 0) {
  static const char* const words[] = {"kalo", "miru", "tesa", "vono", "pime", "rasu",
                                      "lebo", "qira", "zunu", "doke", "fasi", "hugo"};
  MadeUpCorpus corpus;
  for (size_t i = 0; i < pairs; ++i) {
    std::string s, t;
    const size_t n = 3 + (i + offset) % 5;
    for (size_t k = 0; k < n; ++k) {
      const std::string w = words[(i * 7 + k * 3 + offset) % 12];
      s += (k ? " " : "") + w;
      t += (k ? " " : "") + std::string(w.rbegin(), w.rend()) + w.substr(0, 2);
    }
    corpus.src.push_back(s + " .");
    corpus.tgt.push_back(t + " !");
  }
  return corpus;
}

inline void write_lines_to(const std::filesystem::path& path, const std::vector<std::string>& lines,
                           const std::string& end = "\n") {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  for (const auto& line : lines) out << line << end;
}

}  // namespace nmt::test
