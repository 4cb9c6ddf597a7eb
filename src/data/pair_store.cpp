#include "data/pair_store.h"

#include <cstring>
#include <string>

#include "core/error.h"

namespace nmt {
namespace {

/// The buffers of a store a builder made.
struct OwnedPairArrays {
  std::vector<uint32_t> src_len, tgt_len;
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> id_data;
};

}  // namespace

PairStore::PairStore(Arrays arrays, std::shared_ptr<const void> owner)
    : a_(arrays), owner_(std::move(owner)) {
  if (a_.id_bytes != 2 && a_.id_bytes != 4) {
    throw Error("PairStore: ids of " + std::to_string(a_.id_bytes) + " bytes (2 or 4 expected)");
  }
}

PairStore PairStore::from_examples(const std::vector<Example>& examples, int id_bytes) {
  PairStoreBuilder builder(id_bytes);
  for (const auto& example : examples) builder.add(example.src, example.tgt);
  return builder.finish();
}

void PairStore::copy_ids(uint64_t first, uint32_t count, int64_t* out) const {
  const uint8_t* bytes = a_.id_data + first * uint64_t(a_.id_bytes);
  if (a_.id_bytes == 2) {
    for (uint32_t j = 0; j < count; ++j) {
      uint16_t id = 0;
      std::memcpy(&id, bytes + 2 * j, 2);
      out[j] = id;
    }
  } else {
    for (uint32_t j = 0; j < count; ++j) {
      uint32_t id = 0;
      std::memcpy(&id, bytes + 4 * j, 4);
      out[j] = id;
    }
  }
}

void PairStore::copy_src(size_t i, int64_t* out) const {
  copy_ids(a_.offsets[i], a_.src_len[i], out);
}

void PairStore::copy_tgt(size_t i, int64_t* out) const {
  copy_ids(a_.offsets[i] + a_.src_len[i], a_.tgt_len[i], out);
}

std::vector<int64_t> PairStore::src(size_t i) const {
  std::vector<int64_t> ids(src_len(i));
  copy_src(i, ids.data());
  return ids;
}

std::vector<int64_t> PairStore::tgt(size_t i) const {
  std::vector<int64_t> ids(tgt_len(i));
  copy_tgt(i, ids.data());
  return ids;
}

int id_bytes_for(int64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

PairStoreBuilder::PairStoreBuilder(int id_bytes) : id_bytes_(id_bytes) {
  if (id_bytes != 2 && id_bytes != 4) {
    throw Error("PairStoreBuilder: ids of " + std::to_string(id_bytes) +
                " bytes (2 or 4 expected)");
  }
}

void PairStoreBuilder::append(const std::vector<int64_t>& ids) {
  const int64_t limit = id_bytes_ == 2 ? 0xffff : 0xffffffffLL;
  const size_t at = id_data_.size();
  id_data_.resize(at + ids.size() * size_t(id_bytes_));
  uint8_t* out = id_data_.data() + at;
  for (size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] < 0 || ids[j] > limit) {
      throw Error("id " + std::to_string(ids[j]) + " does not fit in " + std::to_string(id_bytes_) +
                  " bytes");
    }
    if (id_bytes_ == 2) {
      const auto id = uint16_t(ids[j]);
      std::memcpy(out + 2 * j, &id, 2);
    } else {
      const auto id = uint32_t(ids[j]);
      std::memcpy(out + 4 * j, &id, 4);
    }
  }
}

void PairStoreBuilder::add(const std::vector<int64_t>& src, const std::vector<int64_t>& tgt) {
  append(src);
  append(tgt);
  src_len_.push_back(uint32_t(src.size()));
  tgt_len_.push_back(uint32_t(tgt.size()));
  offsets_.push_back(offsets_.back() + src.size() + tgt.size());
}

PairStore PairStoreBuilder::finish() {
  auto owned = std::make_shared<OwnedPairArrays>();
  owned->src_len = std::move(src_len_);
  owned->tgt_len = std::move(tgt_len_);
  owned->offsets = std::move(offsets_);
  owned->id_data = std::move(id_data_);
  owned->id_data.shrink_to_fit();
  src_len_.clear();
  tgt_len_.clear();
  offsets_.assign(1, 0);
  id_data_.clear();
  PairStore::Arrays arrays;
  arrays.pairs = owned->src_len.size();
  arrays.ids = owned->offsets.back();
  arrays.id_bytes = id_bytes_;
  arrays.src_len = owned->src_len.data();
  arrays.tgt_len = owned->tgt_len.data();
  arrays.offsets = owned->offsets.data();
  arrays.id_data = owned->id_data.data();
  return PairStore(arrays, std::move(owned));
}

}  // namespace nmt
