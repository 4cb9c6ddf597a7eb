#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/dataset.h"
#include "data/pair_store.h"
#include "data/tokenizer.h"

namespace nmt {

/// The training corpora (data.train) encoded: every kept pair packed in one PairStore, with the
/// filtering statistics per corpus. No text is kept.
struct TrainCorpus {
  PairStore pairs;
  FilterStats stats;              ///< all corpora together
  std::vector<CorpusPart> parts;  ///< one per corpus, in order, covering `pairs`
};

/// Reads `corpora` line by line, encodes and filters each pair as load_corpus does (the same
/// pairs, in the same order, the same statistics) and packs them into a PairStore whose id
/// width fits the tokenizer's vocabulary.
TrainCorpus encode_corpora(const DataConfig& data, const std::vector<CorpusSpec>& corpora,
                           const Tokenizer& tokenizer);

/// `<run_dir>/train.corpus`: the encoded training corpus of a run (docs/scaling.md).
std::filesystem::path encoded_corpus_file(const std::filesystem::path& run_dir);

/// What prepare_encoded_corpus did.
struct EncodedCorpusReport {
  std::filesystem::path file;
  bool built = false;    ///< encoded now (else an existing file was mapped)
  std::string reason;    ///< built: why ("no encoded corpus yet", what changed, what is corrupt)
  double seconds = 0.0;  ///< reading, encoding and writing; or checking and mapping
  uint64_t bytes = 0;    ///< size of the file
};

/// The run's encoded training corpus, memory-mapped from encoded_corpus_file(run_dir): used as
/// it is when it was made from the same corpus files (path, size, modification time), tokenizer
/// (checksum), languages and data.max_len by this format version, and is whole (size and CRC-32
/// checks); otherwise encoded anew (encode_corpora) and written durably (temporary file, fsync,
/// rename) before it is mapped. `report`, when given, says which and why.
TrainCorpus prepare_encoded_corpus(const DataConfig& data, const Tokenizer& tokenizer,
                                   const std::filesystem::path& run_dir,
                                   EncodedCorpusReport* report = nullptr);

/// The run's encoded training corpus as another process prepared it (the ranks other than 0):
/// mapped after the same checks; a missing, stale or corrupt file is an nmt::Error saying why.
TrainCorpus open_encoded_corpus(const DataConfig& data, const Tokenizer& tokenizer,
                                const std::filesystem::path& run_dir);

/// `corpus` written to `file` as prepare_encoded_corpus writes it (made from data, tokenizer).
void write_encoded_corpus(const std::filesystem::path& file, const TrainCorpus& corpus,
                          const DataConfig& data, const Tokenizer& tokenizer);

}  // namespace nmt
