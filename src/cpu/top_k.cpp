// Beam search's candidates in one pass (cpu/kernels.h; the reference: decode/beam_search.cpp).

#include <algorithm>
#include <limits>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/vectorize.h"

namespace nmt::cpu {
namespace {

/// Elements per chunk whose maximum decides whether the chunk is read one by one.
constexpr int64_t kChunk = 64;

NMT_VECTOR_CLONES
float max_of(const float* x, int64_t n) {
  float lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], x[i + l]);
  }
  float best = -std::numeric_limits<float>::infinity();
  for (int l = 0; l < kLanes; ++l) best = std::max(best, lanes[l]);
  for (; i < n; ++i) best = std::max(best, x[i]);
  return best;
}

/// The k largest values offered so far, best first; an equal value ranks after those before it.
/// (max_of skips NaNs, so a chunk whose only candidates are NaN is skipped, as -inf would be.)
class Best {
 public:
  explicit Best(int64_t k) : k_(size_t(k)) {
    values_.reserve(k_ + 1);
    ids_.reserve(k_ + 1);
  }
  bool full() const { return values_.size() == k_; }
  float worst() const { return values_.back(); }
  void offer(float value, int64_t id) {
    // A NaN (from a broken model) ranks as -inf: it must not become the bar for the rest.
    if (value != value) value = -std::numeric_limits<float>::infinity();
    if (full() && !(value > worst())) return;
    size_t at = values_.size();
    while (at > 0 && value > values_[at - 1]) --at;
    values_.insert(values_.begin() + std::ptrdiff_t(at), value);
    ids_.insert(ids_.begin() + std::ptrdiff_t(at), id);
    if (values_.size() > k_) values_.pop_back(), ids_.pop_back();
  }
  const std::vector<float>& values() const { return values_; }
  const std::vector<int64_t>& ids() const { return ids_; }

 private:
  size_t k_;
  std::vector<float> values_;
  std::vector<int64_t> ids_;
};

}  // namespace

TopK top_k_grouped(const at::Tensor& x, const std::vector<double>& live, int64_t group, int64_t k) {
  TORCH_CHECK(x.dim() == 2 && x.device().is_cpu() && x.scalar_type() == at::kFloat,
              "top_k_grouped: x must be a float32 CPU matrix, got ", x.sizes(), " ",
              x.scalar_type());
  const int64_t rows = x.size(0), vocab = x.size(1);
  TORCH_CHECK(group >= 1 && rows % group == 0 && int64_t(live.size()) == rows,
              "top_k_grouped: ", rows, " rows, ", live.size(), " live scores, groups of ", group);
  TORCH_CHECK(k >= 1 && k <= group * vocab, "top_k_grouped: k = ", k, " of ", group * vocab);
  const auto input = x.contiguous();
  const float* data = input.data_ptr<float>();
  const int64_t groups = rows / group;
  TopK out{at::empty({groups, k}, at::kDouble), at::empty({groups, k}, at::kLong)};
  double* values = out.values.data_ptr<double>();
  int64_t* ids = out.ids.data_ptr<int64_t>();
  for (int64_t g = 0; g < groups; ++g) {
    Best best(k);
    for (int64_t r = 0; r < group; ++r) {
      const int64_t row = g * group + r;
      const auto base = float(live[size_t(row)]);  // in float, as the tensor sum adds it
      const float* x_row = data + row * vocab;
      for (int64_t start = 0; start < vocab; start += kChunk) {
        const int64_t n = std::min(kChunk, vocab - start);
        // Float addition is monotonic, so no element of a chunk beats its maximum's sum.
        if (best.full() && !(base + max_of(x_row + start, n) > best.worst())) continue;
        for (int64_t i = start; i < start + n; ++i) best.offer(base + x_row[i], r * vocab + i);
      }
    }
    for (int64_t c = 0; c < k; ++c) {
      values[g * k + c] = best.values()[size_t(c)];
      ids[g * k + c] = best.ids()[size_t(c)];
    }
  }
  return out;
}

}  // namespace nmt::cpu
