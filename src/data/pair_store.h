#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace nmt {

/// One sentence pair as subword ids, without bos/eos.
struct Example {
  std::vector<int64_t> src;
  std::vector<int64_t> tgt;
};

/// Encoded sentence pairs packed for corpora of millions of lines: the ids of all pairs in one
/// contiguous buffer (pair i's source ids, then its target ids, from offsets[i]) in the narrowest
/// unsigned type that holds the vocabulary (2 bytes up to 65536 pieces, else 4), with arrays of
/// lengths that batching reads without touching the ids. The memory is a buffer of its own
/// (PairStoreBuilder) or a mapped file (data/encoded_corpus.h); copies share it.
class PairStore {
 public:
  /// The arrays a store reads (also what an encoded corpus file holds, in this order).
  struct Arrays {
    size_t pairs = 0;
    uint64_t ids = 0;                   ///< ids in all, both sides
    int id_bytes = 4;                   ///< 2 or 4
    const uint32_t* src_len = nullptr;  ///< [pairs] source pieces of each pair
    const uint32_t* tgt_len = nullptr;  ///< [pairs] target pieces of each pair
    const uint64_t* offsets = nullptr;  ///< [pairs + 1] first id of each pair; offsets[pairs] = ids
    const uint8_t* id_data = nullptr;   ///< [ids * id_bytes], little-endian
  };

  PairStore() = default;  ///< no pairs
  /// A store over `arrays`, whose memory `owner` keeps alive.
  PairStore(Arrays arrays, std::shared_ptr<const void> owner);
  /// The examples packed into a store of their own (ids of `id_bytes`, 2 or 4): for callers that
  /// hold std::vector<Example> (validation sets, an epoch's re-segmented corpus, tests).
  static PairStore from_examples(const std::vector<Example>& examples, int id_bytes = 4);

  size_t size() const { return a_.pairs; }
  uint32_t src_len(size_t i) const { return a_.src_len[i]; }
  uint32_t tgt_len(size_t i) const { return a_.tgt_len[i]; }
  /// Writes pair i's source (target) ids to out[0, src_len(i)) (out[0, tgt_len(i))).
  void copy_src(size_t i, int64_t* out) const;
  void copy_tgt(size_t i, int64_t* out) const;
  std::vector<int64_t> src(size_t i) const;
  std::vector<int64_t> tgt(size_t i) const;
  Example example(size_t i) const { return {src(i), tgt(i)}; }
  const Arrays& arrays() const { return a_; }

 private:
  void copy_ids(uint64_t first, uint32_t count, int64_t* out) const;
  Arrays a_;
  std::shared_ptr<const void> owner_;
};

/// The id width for a vocabulary of `vocab_size` pieces: 2 bytes up to 65536, else 4.
int id_bytes_for(int64_t vocab_size);

/// Packs pairs one at a time into a new PairStore.
class PairStoreBuilder {
 public:
  /// `id_bytes`: 2 or 4 (id_bytes_for).
  explicit PairStoreBuilder(int id_bytes);
  /// Appends a pair; an id that does not fit the width is an error (a tokenizer bug).
  void add(const std::vector<int64_t>& src, const std::vector<int64_t>& tgt);
  size_t size() const { return src_len_.size(); }
  /// The store of the pairs added; the builder is left empty.
  PairStore finish();

 private:
  void append(const std::vector<int64_t>& ids);
  int id_bytes_;
  std::vector<uint32_t> src_len_, tgt_len_;
  std::vector<uint64_t> offsets_{0};
  std::vector<uint8_t> id_data_;
};

/// The pairs an epoch's batches index: all of a store, or its rows at `rows` (a corpus mix,
/// data/mixing.h), in that order. A view borrows both: they must outlive it.
class PairsView {
 public:
  PairsView() = default;
  explicit PairsView(const PairStore& store, const std::vector<size_t>* rows = nullptr)
      : store_(&store), rows_(rows) {}
  size_t size() const { return store_ == nullptr ? 0 : rows_ ? rows_->size() : store_->size(); }
  /// The store row of the view's i-th pair.
  size_t row(size_t i) const { return rows_ ? (*rows_)[i] : i; }
  uint32_t src_len(size_t i) const { return store_->src_len(row(i)); }
  uint32_t tgt_len(size_t i) const { return store_->tgt_len(row(i)); }
  const PairStore& store() const { return *store_; }

 private:
  const PairStore* store_ = nullptr;
  const std::vector<size_t>* rows_ = nullptr;
};

}  // namespace nmt
