#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

void write_gzip(const fs::path& file, const std::string& text) {
  gzFile out = gzopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(out);
}

TEST(Corpus, ReadsPlainLinesDroppingCarriageReturns) {
  const auto dir = test::temp_dir("corpus_plain");
  write_text(dir / "a.txt", "one\r\ntwo  \n\nfünf Straße\n");
  const std::vector<std::string> expected{"one", "two  ", "", "fünf Straße"};
  EXPECT_EQ(read_lines(dir / "a.txt"), expected);
  write_text(dir / "b.txt", "no final newline");
  EXPECT_EQ(read_lines(dir / "b.txt"), std::vector<std::string>{"no final newline"});
  write_text(dir / "empty.txt", "");
  EXPECT_TRUE(read_lines(dir / "empty.txt").empty());
}

TEST(Corpus, ReadsGzipDetectedByMagicBytesNotName) {
  const auto dir = test::temp_dir("corpus_gzip");
  const std::string text = "ein Mann fährt ein rotes Fahrrad .\nzwei Hunde spielen im Schnee .\n";
  write_gzip(dir / "x.de.gz", text);
  write_gzip(dir / "misnamed.de", text);
  const std::vector<std::string> expected{"ein Mann fährt ein rotes Fahrrad .",
                                          "zwei Hunde spielen im Schnee ."};
  EXPECT_EQ(read_lines(dir / "x.de.gz"), expected);
  EXPECT_EQ(read_lines(dir / "misnamed.de"), expected);
}

TEST(Corpus, ReadsAPipeWhole) {
  // A pipe can be read once: the file must be opened once, with no look-ahead of its own
  // (`nmt score --src /dev/stdin` once read 0 lines: the gzip sniff had taken the data).
  const auto dir = test::temp_dir("corpus_pipe");
  for (const bool gzip : {false, true}) {
    const fs::path fifo = dir / (gzip ? "pipe.gz" : "pipe.txt");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string text = "one\ntwo\nthree\n";
    std::atomic<bool> read_done{false};
    std::thread writer([&] {
      if (gzip) {
        write_gzip(fifo, text);
      } else {
        write_text(fifo, text);
      }
      // A reader that opens the pipe a second time would wait for a writer for ever: open and
      // close it again while the read lasts, so such a reader sees an empty pipe and the test
      // fails, not hangs.
      for (int tries = 0; tries < 100 && !read_done; ++tries) {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // fails with no reader
        if (fd >= 0) ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    std::vector<std::string> lines;
    try {
      lines = read_lines(fifo);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    read_done = true;
    writer.join();
    EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"})) << fifo;
  }
}

TEST(Corpus, CorruptGzipIsAnErrorNamingTheFile) {
  const auto dir = test::temp_dir("corpus_badgz");
  write_text(dir / "bad.gz", std::string("\x1f\x8b\x08\x00garbage-not-deflate", 22));
  test::expect_error([&] { read_lines(dir / "bad.gz"); }, "bad.gz");
}

TEST(Corpus, MisalignedFilesNameBothFilesAndCounts) {
  const auto dir = test::temp_dir("corpus_misaligned");
  write_text(dir / "s.en", "a\nb\nc\n");
  write_text(dir / "s.de", "a\nb\n");
  test::expect_error(
      [&] { read_parallel(dir / "s.en", dir / "s.de"); },
      "'" + (dir / "s.en").string() + "' has 3 lines but '" + (dir / "s.de").string() + "' has 2");
}

TEST(Corpus, InvalidUtf8NamesFileAndLine) {
  const auto dir = test::temp_dir("corpus_utf8");
  const std::string latin1_sz = "\xdf";  // ß in ISO-8859-1, not valid UTF-8
  write_text(dir / "latin1.de", "gut\nStra" + latin1_sz + "e\n");
  test::expect_error([&] { read_lines(dir / "latin1.de"); },
                     "'" + (dir / "latin1.de").string() + "' line 2: invalid UTF-8 at byte 5");
}

TEST(Corpus, MissingFileIsAnErrorNamingIt) {
  const auto missing = test::temp_dir("corpus_missing") / "nope.en";
  test::expect_error([&] { read_lines(missing); }, "file not found: '" + missing.string() + "'");
}

TEST(Corpus, ValidUtf8RejectsOverlongSurrogatesAndTruncation) {
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("Grüße, 東京, \xF0\x9F\x98\x80"));
  size_t offset = 99;
  EXPECT_FALSE(valid_utf8("ab\xC0\xAF", &offset));  // overlong '/'
  EXPECT_EQ(offset, 2u);
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));        // UTF-16 surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));    // above U+10FFFF
  EXPECT_FALSE(valid_utf8("x\xE2\x82", &offset));  // truncated
  EXPECT_EQ(offset, 1u);
}

TEST(Corpus, SplitFilePrefersPlainThenGzipElseListsBoth) {
  const auto dir = test::temp_dir("corpus_split");
  write_gzip(dir / "train.en.gz", "x\n");
  EXPECT_EQ(split_file(dir, "train", "en"), dir / "train.en.gz");
  write_text(dir / "train.en", "x\n");
  EXPECT_EQ(split_file(dir, "train", "en"), dir / "train.en");
  test::expect_error(
      [&] { split_file(dir, "val", "de"); },
      "neither '" + (dir / "val.de").string() + "' nor '" + (dir / "val.de.gz").string() + "'");
}

TEST(Corpus, ReadsTheFixtureCorpus) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  EXPECT_EQ(text.size(), 400u);
  EXPECT_EQ(read_parallel(fixtures / "tiny_val.en", fixtures / "tiny_val.de").size(), 40u);
}

/// A split with one empty pair, one whitespace-only side and one over-long pair.
DataConfig filter_config(const fs::path& dir) {
  DataConfig data;
  data.dir = dir.string();
  data.src_lang = "en";
  data.tgt_lang = "de";
  data.vocab_size = 120;
  data.max_len = 25;
  std::string long_en, long_de;
  for (int i = 0; i < 8; ++i) long_en += "a man is running . ", long_de += "ein Mann läuft . ";
  write_text(dir / "s.en", "a man is running .\n\n   \na dog is sleeping .\n" + long_en + "\n");
  write_text(dir / "s.de",
             "ein Mann läuft .\n\nein Hund\n\tein Hund schläft .  \n" + long_de + "\n");
  return data;
}

TEST(Corpus, LoadSplitFiltersEmptyAndLongPairsWithCounts) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  const auto dir = test::temp_dir("corpus_filter");
  DataConfig data = filter_config(dir);
  const auto tiny = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const Tokenizer tokenizer = Tokenizer::train(data, tiny.src, tiny.tgt, dir / "spm");

  const EncodedSplit split = load_split(data, "s", tokenizer);
  EXPECT_EQ(split.stats.read, 5u);
  EXPECT_EQ(split.stats.empty, 2u);
  EXPECT_EQ(split.stats.too_long, 1u);
  EXPECT_EQ(split.stats.kept, 2u);
  ASSERT_EQ(split.examples.size(), 2u);
  EXPECT_EQ(split.tgt_text[1], "ein Hund schläft .");  // trimmed
  EXPECT_EQ(split.stats.src_tokens,
            static_cast<int64_t>(split.examples[0].src.size() + split.examples[1].src.size()));
  EXPECT_EQ(split.stats.tgt_tokens,
            static_cast<int64_t>(split.examples[0].tgt.size() + split.examples[1].tgt.size()));
  EXPECT_EQ(load_split(data, "s", tokenizer, /*filter_long=*/false).stats.kept, 3u);
  EXPECT_NE(
      describe("s", split.stats).find("5 pairs read, 2 kept, 3 filtered (2 empty, 1 too long)"),
      std::string::npos);

  // The other direction reads the same files swapped.
  data.src_lang = "de";
  data.tgt_lang = "en";
  const EncodedSplit reversed = load_split(data, "s", tokenizer);
  EXPECT_EQ(reversed.src_text[1], "ein Hund schläft .");
  EXPECT_EQ(reversed.tgt_text[1], "a dog is sleeping .");
}

// An epoch's sampled examples are the split's pairs re-segmented: they decode to its text, are
// the same for the same (seed, epoch), differ across epochs and seeds, and keep the best
// segmentation where a sample would exceed data.max_len.
TEST(Corpus, SampledExamplesArePerEpochReproducibleAndWithinMaxLen) {
  const auto run = test::temp_dir("corpus_sample");
  DataConfig data = test::tiny_data();
  data.subword_alpha = 0.2;
  EXPECT_TRUE(samples_subwords(data));
  const Tokenizer tokenizer = prepare_tokenizer(data, run);
  const EncodedSplit split = load_split(data, "tiny", tokenizer);
  const auto epoch0 = epoch_examples(data, split, tokenizer, 0);
  ASSERT_EQ(epoch0.size(), split.examples.size());
  size_t differ = 0;
  for (size_t i = 0; i < epoch0.size(); ++i) {
    EXPECT_EQ(tokenizer.decode_src(epoch0[i].src), split.src_text[i]);
    EXPECT_EQ(tokenizer.decode_tgt(epoch0[i].tgt), split.tgt_text[i]);
    differ += epoch0[i].tgt != split.examples[i].tgt;
  }
  EXPECT_GT(differ, 0u);
  EXPECT_TRUE(test::same_examples(epoch_examples(data, split, tokenizer, 0), epoch0));
  EXPECT_FALSE(test::same_examples(epoch_examples(data, split, tokenizer, 1), epoch0));
  DataConfig reseeded = data;
  reseeded.seed = 2;
  EXPECT_FALSE(test::same_examples(epoch_examples(reseeded, split, tokenizer, 0), epoch0));

  // With max_len at the longest best segmentation, a longer sample falls back to it.
  DataConfig tight = data;
  tight.max_len = 0;
  for (const auto& example : split.examples) {
    tight.max_len = std::max<int64_t>(tight.max_len, int64_t(example.src.size()));
    tight.max_len = std::max<int64_t>(tight.max_len, int64_t(example.tgt.size()));
  }
  tight.subword_alpha = 0.01;  // nearly uniform over segmentations: long samples are common
  size_t fell_back = 0;
  const auto bounded = epoch_examples(tight, split, tokenizer, 0);
  for (size_t i = 0; i < bounded.size(); ++i) {
    EXPECT_LE(int64_t(bounded[i].src.size()), tight.max_len);
    EXPECT_LE(int64_t(bounded[i].tgt.size()), tight.max_len);
    fell_back += bounded[i].src == split.examples[i].src;
  }
  EXPECT_GT(fell_back, 0u);
}

TEST(Corpus, PrepareTokenizerTrainsOnceThenLoads) {
  const auto run = test::temp_dir("corpus_prepare");
  const DataConfig data = test::tiny_data();
  bool trained = false;
  const Tokenizer first = prepare_tokenizer(data, run, &trained);
  EXPECT_TRUE(trained);
  EXPECT_TRUE(fs::exists(run / "spm.model"));
  const Tokenizer second = prepare_tokenizer(data, run, &trained);
  EXPECT_FALSE(trained);
  EXPECT_EQ(second.serialized(), first.serialized());
}

TEST(Corpus, TargetsWithFullWidthPunctuationWarnThatNfkcDropsIt) {
  const auto dir = test::temp_dir("corpus_fullwidth");
  const DataConfig plain = test::tiny_data();
  TokenizerReport report;
  prepare_tokenizer(plain, dir / "plain", nullptr, &report);
  EXPECT_GT(report.tgt_chars, 0);
  EXPECT_EQ(report.tgt_fullwidth, 0);
  EXPECT_EQ(normalization_warning(plain, report), "");
  // The same German written with Chinese punctuation: "，" and "？" on every line.
  std::ifstream in(fs::path(NMT_FIXTURES_DIR) / "tiny.de");
  std::ofstream out(dir / "tiny.fw");
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    out << "\xEF\xBC\x8C" << line << "\xEF\xBC\x9F\n";
  }
  out.close();
  DataConfig data = plain;
  CorpusSpec files;
  files.kind = CorpusKind::kFiles;
  files.src = (fs::path(NMT_FIXTURES_DIR) / "tiny.en").string();
  files.tgt = (dir / "tiny.fw").string();
  data.train = {files};
  prepare_tokenizer(data, dir / "nfkc", nullptr, &report);
  EXPECT_EQ(report.tgt_fullwidth, int64_t(2 * lines));
  const std::string warning = normalization_warning(data, report);
  EXPECT_NE(warning.find("data.normalization=nmt_nfkc makes ASCII"), std::string::npos) << warning;
  data.normalization = Normalization::kIdentity;
  prepare_tokenizer(data, dir / "identity", nullptr, &report);
  EXPECT_EQ(normalization_warning(data, report), "");
}

}  // namespace
}  // namespace nmt
