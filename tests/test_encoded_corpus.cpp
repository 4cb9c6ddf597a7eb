// data/encoded_corpus.h, data/pair_store.h: the compact, memory-mapped training corpus gives the
// batches and tensors of the in-memory path, and its file is rebuilt whenever it is stale or
// damaged, never trusted.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "corpus_test_util.h"
#include "data/batching.h"
#include "data/dataset.h"
#include "data/encoded_corpus.h"
#include "data/mixing.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// tiny's data section with its corpus copied into `dir` (so a test may change it).
DataConfig copied_tiny_data(const fs::path& dir) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  fs::create_directories(dir);
  for (const char* name : {"tiny.en", "tiny.de", "tiny_val.en", "tiny_val.de"}) {
    fs::copy_file(fixtures / name, dir / name, fs::copy_options::overwrite_existing);
  }
  DataConfig data = test::tiny_config(dir / "run").data;
  data.dir = dir.string();
  return data;
}

/// Rebuilt (and why) or reused, by prepare_encoded_corpus.
EncodedCorpusReport prepare_report(const DataConfig& data, const Tokenizer& tokenizer,
                                   const fs::path& run) {
  EncodedCorpusReport report;
  prepare_encoded_corpus(data, tokenizer, run, &report);
  return report;
}

void expect_same_batch(const Batch& a, const Batch& b) {
  EXPECT_TRUE(a.src.equal(b.src));
  EXPECT_TRUE(a.tgt_in.equal(b.tgt_in));
  EXPECT_TRUE(a.tgt_out.equal(b.tgt_out));
  EXPECT_EQ(a.src_tokens, b.src_tokens);
  EXPECT_EQ(a.tgt_tokens, b.tgt_tokens);
  EXPECT_EQ(a.indices, b.indices);
}

/// Every epoch's batches and their tensors, from held examples and from a view over a store.
void expect_same_epochs(const std::vector<Example>& examples, const PairsView& pairs) {
  ASSERT_EQ(pairs.size(), examples.size());
  BatchingOptions options;
  options.batch_tokens = 300;
  options.pool_batches = 5;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const auto expected = make_batches(examples, options, epoch);
    const auto batches = make_batches(pairs, options, epoch);
    ASSERT_EQ(batches, expected) << "epoch " << epoch;
    for (const auto& batch : batches)
      expect_same_batch(collate(pairs, batch), collate(examples, batch));
  }
}

TEST(EncodedCorpus, MappedFileGivesTheBatchesAndTensorsOfTheInMemoryPath) {
  const test::TempDir dir("encoded_same");
  const DataConfig data = test::tiny_config(dir / "run").data;
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  const EncodedSplit held = load_corpora(data, data.train, tokenizer);
  for (int attempt = 0; attempt < 2; ++attempt) {  // written, then mapped as found
    EncodedCorpusReport report;
    const TrainCorpus mapped = prepare_encoded_corpus(data, tokenizer, dir / "run", &report);
    EXPECT_EQ(report.built, attempt == 0) << report.reason;
    EXPECT_EQ(mapped.pairs.arrays().id_bytes, 2);  // vocabulary 150
    EXPECT_EQ(mapped.stats.kept, held.stats.kept);
    EXPECT_EQ(mapped.stats.tgt_tokens, held.stats.tgt_tokens);
    EXPECT_EQ(mapped.stats.too_long, held.stats.too_long);
    ASSERT_EQ(mapped.parts.size(), 1u);
    EXPECT_EQ(mapped.parts[0].end, held.examples.size());
    for (size_t i = 0; i < held.examples.size(); ++i) {
      ASSERT_EQ(mapped.pairs.src(i), held.examples[i].src) << i;
      ASSERT_EQ(mapped.pairs.tgt(i), held.examples[i].tgt) << i;
    }
    expect_same_epochs(held.examples, PairsView(mapped.pairs));
  }
  EXPECT_FALSE(fs::exists(encoded_corpus_file(dir / "run").string() + ".tmp"));
}

// Weighted corpora: the mixed rows of the store give the pairs the in-memory mix copied.
TEST(EncodedCorpus, WeightedCorporaMixTheSameRows) {
  const test::TempDir dir("encoded_mix");
  DataConfig data = test::tiny_config(dir / "run").data;
  CorpusSpec twice = CorpusSpec::of_split("tiny_val");
  twice.weight = 2.5;
  data.train.push_back(twice);
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  const EncodedSplit held = load_corpora(data, data.train, tokenizer);
  const TrainCorpus mapped = prepare_encoded_corpus(data, tokenizer, dir / "run");
  ASSERT_EQ(mapped.parts.size(), 2u);
  EXPECT_EQ(mapped.parts[1].weight, 2.5);
  EXPECT_EQ(mapped.parts[1].begin, held.parts[1].begin);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const auto rows = epoch_mix(mapped.parts, data.seed, epoch);
    EXPECT_EQ(rows, epoch_mix(held.parts, data.seed, epoch));
    std::vector<Example> mixed;
    for (const size_t i : rows) mixed.push_back(held.examples[i]);
    expect_same_epochs(mixed, PairsView(mapped.pairs, &rows));
  }
}

TEST(EncodedCorpus, RebuiltWhenACorpusFileChangesInSizeOrTime) {
  const test::TempDir dir("encoded_changed");
  const DataConfig data = copied_tiny_data(dir / "data");
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  EXPECT_EQ(prepare_report(data, tokenizer, dir / "run").reason, "there is none yet");
  EXPECT_FALSE(prepare_report(data, tokenizer, dir / "run").built);
  std::ofstream(dir / "data" / "tiny.en", std::ios::app) << "one more line .\n";
  std::ofstream(dir / "data" / "tiny.de", std::ios::app) << "noch eine Zeile .\n";
  auto report = prepare_report(data, tokenizer, dir / "run");
  EXPECT_TRUE(report.built);
  EXPECT_NE(report.reason.find("made from other inputs: file '"), std::string::npos)
      << report.reason;
  EXPECT_NE(report.reason.find("tiny.en' bytes was"), std::string::npos) << report.reason;
  EXPECT_EQ(prepare_encoded_corpus(data, tokenizer, dir / "run").stats.read, 401u);
  const fs::path de = dir / "data" / "tiny.de";
  fs::last_write_time(de, fs::last_write_time(de) + std::chrono::seconds(5));
  report = prepare_report(data, tokenizer, dir / "run");
  EXPECT_TRUE(report.built);
  EXPECT_NE(report.reason.find("tiny.de' mtime_ns was"), std::string::npos) << report.reason;
  EXPECT_FALSE(prepare_report(data, tokenizer, dir / "run").built);
}

TEST(EncodedCorpus, RebuiltWhenTheTokenizerOrAnEncodingOptionChanges) {
  const test::TempDir dir("encoded_options");
  DataConfig data = test::tiny_config(dir / "run").data;
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  EXPECT_TRUE(prepare_report(data, tokenizer, dir / "run").built);
  DataConfig other_vocab = data;
  other_vocab.vocab_size = 120;
  const Tokenizer other = prepare_tokenizer(other_vocab, dir / "other");
  auto report = prepare_report(data, other, dir / "run");
  EXPECT_TRUE(report.built);
  EXPECT_NE(report.reason.find("tokenizer crc32 was"), std::string::npos) << report.reason;
  report = prepare_report(data, tokenizer, dir / "run");
  EXPECT_TRUE(report.built);
  data.max_len = 20;
  report = prepare_report(data, tokenizer, dir / "run");
  EXPECT_TRUE(report.built);
  EXPECT_NE(report.reason.find("data.max_len was 63, now 20"), std::string::npos) << report.reason;
  std::swap(data.src_lang, data.tgt_lang);
  report = prepare_report(data, tokenizer, dir / "run");
  EXPECT_TRUE(report.built);
  EXPECT_NE(report.reason.find("data.src_lang was \"en\", now \"de\""), std::string::npos)
      << report.reason;
}

/// The bytes of `file` with the one at `offset` (from the end when negative) flipped.
void flip_byte(const fs::path& file, int64_t offset) {
  std::fstream io(file, std::ios::binary | std::ios::in | std::ios::out);
  io.seekg(offset, offset < 0 ? std::ios::end : std::ios::beg);
  const auto at = io.tellg();
  char byte = 0;
  io.read(&byte, 1);
  io.seekp(at);
  byte = char(byte ^ 0x10);
  io.write(&byte, 1);
}

TEST(EncodedCorpus, TruncatedOrCorruptFileIsRebuiltNeverTrusted) {
  const test::TempDir dir("encoded_corrupt");
  const DataConfig data = test::tiny_config(dir / "run").data;
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  const EncodedSplit held = load_corpora(data, data.train, tokenizer);
  const fs::path file = encoded_corpus_file(dir / "run");
  EXPECT_TRUE(prepare_report(data, tokenizer, dir / "run").built);
  const auto size = fs::file_size(file);
  const auto expect_rebuilt = [&](const std::string& why) {
    EncodedCorpusReport report;
    const TrainCorpus corpus = prepare_encoded_corpus(data, tokenizer, dir / "run", &report);
    EXPECT_TRUE(report.built);
    EXPECT_NE(report.reason.find(why), std::string::npos) << report.reason;
    EXPECT_EQ(fs::file_size(file), size);
    expect_same_epochs(held.examples, PairsView(corpus.pairs));
  };
  fs::resize_file(file, size - 3);
  expect_rebuilt("truncated or overlong (" + std::to_string(size - 3) + " bytes");
  fs::resize_file(file, 40);
  expect_rebuilt("truncated (40 bytes, less than its header)");
  flip_byte(file, -1);  // the last id
  expect_rebuilt("checksum does not match");
  flip_byte(file, 64 + 20);  // the metadata
  expect_rebuilt("checksum does not match");
  flip_byte(file, 16);  // the header's pair count
  expect_rebuilt("header is corrupt");
  flip_byte(file, 0);
  expect_rebuilt("not an nmt encoded corpus");
  flip_byte(file, 8);
  expect_rebuilt("format version");
  EXPECT_FALSE(prepare_report(data, tokenizer, dir / "run").built);
}

// The other ranks of a distributed run map rank 0's file and never write one themselves.
TEST(EncodedCorpus, OpeningAMissingOrStaleFileIsAnErrorSayingWhy) {
  const test::TempDir dir("encoded_open");
  DataConfig data = test::tiny_config(dir / "run").data;
  const Tokenizer tokenizer = prepare_tokenizer(data, dir / "run");
  test::expect_error([&] { open_encoded_corpus(data, tokenizer, dir / "run"); },
                     "the encoded training corpus, cannot be used: there is none yet");
  prepare_encoded_corpus(data, tokenizer, dir / "run");
  EXPECT_EQ(open_encoded_corpus(data, tokenizer, dir / "run").pairs.size(),
            prepare_encoded_corpus(data, tokenizer, dir / "run").pairs.size());
  data.max_len = 9;
  test::expect_error([&] { open_encoded_corpus(data, tokenizer, dir / "run"); },
                     "data.max_len was 63, now 9");
}

TEST(PairStore, PacksIdsInTheNarrowestWidthAndRefusesIdsThatDoNotFit) {
  EXPECT_EQ(id_bytes_for(65536), 2);
  EXPECT_EQ(id_bytes_for(65537), 4);
  PairStoreBuilder narrow(2);
  narrow.add({5, 65535}, {7});
  test::expect_error([&] { narrow.add({65536}, {1}); }, "id 65536 does not fit in 2 bytes");
  PairStoreBuilder wide(4);
  wide.add({70000, 3}, {4, 5, 6});
  wide.add({}, {9});
  const PairStore store = wide.finish();
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(store.src(0), (std::vector<int64_t>{70000, 3}));
  EXPECT_EQ(store.tgt(0), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(store.src_len(1), 0u);
  EXPECT_EQ(store.tgt(1), (std::vector<int64_t>{9}));
  EXPECT_EQ(store.arrays().ids, 6u);
}

}  // namespace
}  // namespace nmt
