#include "decode/shortlist.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/special_ids.h"

namespace nmt {
namespace {

constexpr const char* kHeader = "# nmt shortlist: vocabulary ";

/// Ids of `sentence` inside [0, size), without pad and bos (never read or written), each once,
/// sorted.
std::vector<int32_t> distinct_ids(const std::vector<int64_t>& sentence, int64_t size) {
  std::vector<int32_t> ids;
  for (const int64_t id : sentence) {
    if (id >= 0 && id < size && id != kPadId && id != kBosId) ids.push_back(int32_t(id));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void sort_unique(std::vector<int32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

/// IBM Model 1's translation table over the pairs that ever meet, in compressed rows: row s
/// (a source id, or the null source `rows - 1`) holds its targets in ascending order.
struct Table {
  std::vector<int64_t> offsets;  ///< [rows + 1]
  std::vector<int32_t> targets;
  std::vector<float> prob;  ///< t(target | source)

  int64_t find(int64_t row, int32_t target) const {
    const auto begin = targets.begin() + offsets[row], end = targets.begin() + offsets[row + 1];
    return std::lower_bound(begin, end, target) - targets.begin();
  }
};

}  // namespace

Shortlist Shortlist::learn(const std::vector<std::vector<int64_t>>& sources,
                           const std::vector<std::vector<int64_t>>& targets, int64_t src_vocab_size,
                           int64_t tgt_vocab_size, const ShortlistOptions& options) {
  if (sources.size() != targets.size()) {
    throw Error("shortlist: " + std::to_string(sources.size()) + " sources but " +
                std::to_string(targets.size()) + " targets");
  }
  if (options.per_source < 1 || options.frequent < 0 || options.iterations < 1) {
    throw Error("shortlist: per source >= 1, frequent >= 0 and iterations >= 1 (got " +
                std::to_string(options.per_source) + ", " + std::to_string(options.frequent) +
                ", " + std::to_string(options.iterations) + ")");
  }
  const int64_t rows = src_vocab_size + 1;  // the last row: the null source
  std::vector<std::vector<int32_t>> meets(static_cast<size_t>(rows));
  std::vector<size_t> settled(static_cast<size_t>(rows), 0);
  std::vector<int64_t> tgt_count(static_cast<size_t>(tgt_vocab_size), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    auto src = distinct_ids(sources[i], src_vocab_size);
    src.push_back(int32_t(rows - 1));
    const auto tgt = distinct_ids(targets[i], tgt_vocab_size);
    for (const int64_t id : targets[i]) {
      if (id >= 0 && id < tgt_vocab_size) ++tgt_count[size_t(id)];
    }
    for (const int32_t s : src) {
      auto& list = meets[size_t(s)];
      list.insert(list.end(), tgt.begin(), tgt.end());
      if (list.size() > 2 * settled[size_t(s)] + 4096) {  // bound the memory of frequent pieces
        sort_unique(list);
        settled[size_t(s)] = list.size();
      }
    }
  }
  Table table;
  table.offsets.assign(size_t(rows) + 1, 0);
  for (int64_t s = 0; s < rows; ++s) {
    sort_unique(meets[size_t(s)]);
    table.offsets[size_t(s) + 1] = table.offsets[size_t(s)] + int64_t(meets[size_t(s)].size());
  }
  table.targets.reserve(size_t(table.offsets.back()));
  table.prob.reserve(size_t(table.offsets.back()));
  for (auto& list : meets) {
    table.targets.insert(table.targets.end(), list.begin(), list.end());
    table.prob.insert(table.prob.end(), list.size(),
                      1.0f / float(std::max<size_t>(list.size(), 1)));
    std::vector<int32_t>().swap(list);
  }

  // EM: every target token's expected counts over its sentence's sources (null included).
  std::vector<double> counts(table.prob.size());
  std::vector<int64_t> slots;
  std::vector<double> p;
  for (int64_t iteration = 0; iteration < options.iterations; ++iteration) {
    std::fill(counts.begin(), counts.end(), 0.0);
    for (size_t i = 0; i < sources.size(); ++i) {
      std::vector<int32_t> src;
      for (const int64_t id : sources[i]) {
        if (id >= 0 && id < src_vocab_size && id != kPadId && id != kBosId)
          src.push_back(int32_t(id));
      }
      src.push_back(int32_t(rows - 1));
      for (const int64_t t : targets[i]) {
        if (t < 0 || t >= tgt_vocab_size || t == kPadId || t == kBosId) continue;
        slots.clear();
        p.clear();
        double total = 0.0;
        for (const int32_t s : src) {
          const int64_t slot = table.find(s, int32_t(t));
          slots.push_back(slot);
          p.push_back(table.prob[size_t(slot)]);
          total += p.back();
        }
        if (total <= 0.0) continue;
        for (size_t k = 0; k < slots.size(); ++k) counts[size_t(slots[k])] += p[k] / total;
      }
    }
    for (int64_t s = 0; s < rows; ++s) {
      double sum = 0.0;
      for (int64_t k = table.offsets[size_t(s)]; k < table.offsets[size_t(s) + 1]; ++k) {
        sum += counts[size_t(k)];
      }
      for (int64_t k = table.offsets[size_t(s)]; k < table.offsets[size_t(s) + 1]; ++k) {
        table.prob[size_t(k)] = sum > 0.0 ? float(counts[size_t(k)] / sum) : 0.0f;
      }
    }
  }

  Shortlist shortlist;
  shortlist.tgt_vocab_size_ = tgt_vocab_size;
  shortlist.options_ = options;
  shortlist.by_source_.resize(size_t(src_vocab_size));
  for (int64_t s = 0; s < src_vocab_size; ++s) {
    std::vector<int64_t> order(size_t(table.offsets[size_t(s) + 1] - table.offsets[size_t(s)]));
    std::iota(order.begin(), order.end(), table.offsets[size_t(s)]);
    const auto better = [&](int64_t a, int64_t b) {
      return table.prob[size_t(a)] != table.prob[size_t(b)]
                 ? table.prob[size_t(a)] > table.prob[size_t(b)]
                 : table.targets[size_t(a)] < table.targets[size_t(b)];
    };
    const size_t keep = std::min(order.size(), size_t(options.per_source));
    std::partial_sort(order.begin(), order.begin() + long(keep), order.end(), better);
    for (size_t k = 0; k < keep; ++k) {
      if (table.prob[size_t(order[k])] <= 0.0f) break;
      shortlist.by_source_[size_t(s)].push_back(table.targets[size_t(order[k])]);
    }
  }
  std::vector<int64_t> by_count(static_cast<size_t>(tgt_vocab_size));
  std::iota(by_count.begin(), by_count.end(), 0);
  const size_t frequent = std::min(by_count.size(), size_t(options.frequent));
  std::partial_sort(by_count.begin(), by_count.begin() + long(frequent), by_count.end(),
                    [&](int64_t a, int64_t b) {
                      return tgt_count[size_t(a)] != tgt_count[size_t(b)]
                                 ? tgt_count[size_t(a)] > tgt_count[size_t(b)]
                                 : a < b;
                    });
  for (size_t k = 0; k < frequent; ++k) {
    if (tgt_count[size_t(by_count[k])] > 0) shortlist.always_.push_back(by_count[k]);
  }
  for (const int64_t id : {kUnkId, kEosId}) {
    if (id < tgt_vocab_size) shortlist.always_.push_back(id);
  }
  std::sort(shortlist.always_.begin(), shortlist.always_.end());
  shortlist.always_.erase(std::unique(shortlist.always_.begin(), shortlist.always_.end()),
                          shortlist.always_.end());
  return shortlist;
}

Shortlist Shortlist::load(const std::filesystem::path& file, const Tokenizer& tokenizer) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot read the shortlist (no such file?)");
  const std::string where = file.string();
  std::string line;
  if (!std::getline(in, line) || line.rfind(kHeader, 0) != 0) {
    throw Error(where + " line 1: not an nmt shortlist (it starts with \"" + kHeader +
                "\"; nmt shortlist learns one)");
  }
  const std::string rest = line.substr(std::string(kHeader).size());
  const std::string made_for = rest.substr(0, rest.find(','));
  if (made_for != tokenizer.fingerprint()) {
    throw Error(where + ": a shortlist for another vocabulary (tokenizer " + made_for +
                ", the model's is " + tokenizer.fingerprint() +
                "): learn one for this model with nmt shortlist --checkpoint");
  }
  Shortlist shortlist;
  shortlist.tgt_vocab_size_ = tokenizer.tgt_vocab_size();
  shortlist.by_source_.resize(size_t(tokenizer.src_vocab_size()));
  long long per_source = 0, frequent = 0, src_size = 0, tgt_size = 0;
  if (std::sscanf(rest.c_str() + made_for.size(),
                  ", %lld source and %lld target pieces, %lld per source, %lld frequent", &src_size,
                  &tgt_size, &per_source, &frequent) == 4) {
    shortlist.options_.per_source = per_source;
    shortlist.options_.frequent = frequent;
  }
  const auto target_ids = [&](const std::string& text, int64_t number) {
    std::vector<int64_t> ids;
    std::istringstream pieces(text);
    std::string piece;
    while (pieces >> piece) {
      const int64_t id = tokenizer.tgt_piece_id(piece);
      if (id < 0) {
        throw Error(where + " line " + std::to_string(number) + ": '" + piece +
                    "' is not a piece of the model's target vocabulary");
      }
      if (id != kPadId && id != kBosId) ids.push_back(id);
    }
    return ids;
  };
  for (int64_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) {
      throw Error(where + " line " + std::to_string(number) +
                  ": expected a source piece, a tab and target pieces separated by spaces");
    }
    const std::string key = line.substr(0, tab);
    auto ids = target_ids(line.substr(tab + 1), number);
    if (key.empty()) {
      shortlist.always_.insert(shortlist.always_.end(), ids.begin(), ids.end());
      continue;
    }
    const int64_t source = tokenizer.src_piece_id(key);
    if (source < 0) {
      throw Error(where + " line " + std::to_string(number) + ": '" + key +
                  "' is not a piece of the model's source vocabulary");
    }
    auto& list = shortlist.by_source_[size_t(source)];
    list.insert(list.end(), ids.begin(), ids.end());
  }
  for (const int64_t id : {kUnkId, kEosId}) shortlist.always_.push_back(id);
  std::sort(shortlist.always_.begin(), shortlist.always_.end());
  shortlist.always_.erase(std::unique(shortlist.always_.begin(), shortlist.always_.end()),
                          shortlist.always_.end());
  return shortlist;
}

void Shortlist::write_vmap(std::ostream& out, const Tokenizer& tokenizer) const {
  out << '\t';
  for (size_t k = 0; k < always_.size(); ++k) {
    out << (k ? " " : "") << tokenizer.tgt_piece(always_[k]);
  }
  out << '\n';
  for (size_t s = 0; s < by_source_.size(); ++s) {
    if (by_source_[s].empty()) continue;
    out << tokenizer.src_piece(int64_t(s)) << '\t';
    for (size_t k = 0; k < by_source_[s].size(); ++k) {
      out << (k ? " " : "") << tokenizer.tgt_piece(by_source_[s][k]);
    }
    out << '\n';
  }
}

void Shortlist::save(const std::filesystem::path& file, const Tokenizer& tokenizer) const {
  std::ostringstream out;
  out << kHeader << tokenizer.fingerprint() << ", " << tokenizer.src_vocab_size() << " source and "
      << tokenizer.tgt_vocab_size() << " target pieces, " << options_.per_source << " per source, "
      << options_.frequent << " frequent\n";
  write_vmap(out, tokenizer);
  write_file_atomically(file, out.str(), "shortlist");
}

std::vector<char> Shortlist::wanted(const int64_t* src, int64_t length,
                                    const std::vector<int64_t>& forced) const {
  std::vector<char> wanted(static_cast<size_t>(tgt_vocab_size_), 0);
  for (const int64_t id : always_) wanted[size_t(id)] = 1;
  for (const int64_t id : forced) {
    if (id >= 0 && id < tgt_vocab_size_) wanted[size_t(id)] = 1;
  }
  for (int64_t i = 0; i < length; ++i) {
    // Padding is not part of a sentence: its list must not depend on the batch's longest.
    if (src[i] == kPadId || src[i] < 0 || src[i] >= src_vocab_size()) continue;
    for (const int64_t t : by_source_[size_t(src[i])]) wanted[size_t(t)] = 1;
  }
  return wanted;
}

at::Tensor Shortlist::candidates(const at::Tensor& src, const std::vector<int64_t>& forced) const {
  const auto ids = src.to(at::kCPU, at::kLong).contiguous();
  const auto marked = wanted(ids.data_ptr<int64_t>(), ids.numel(), forced);
  std::vector<int64_t> result;
  for (int64_t t = 0; t < tgt_vocab_size_; ++t) {
    if (marked[size_t(t)]) result.push_back(t);
  }
  return at::tensor(at::ArrayRef<int64_t>(result), at::kLong);
}

at::Tensor Shortlist::blocked(const at::Tensor& src, const at::Tensor& candidates,
                              const std::vector<std::vector<int64_t>>& forced) const {
  const auto ids = src.to(at::kCPU, at::kLong).contiguous();  // [batch, src_len]
  const auto columns = candidates.to(at::kCPU, at::kLong).contiguous();
  const int64_t batch = ids.size(0), length = ids.size(1), k = columns.numel();
  auto blocked = at::zeros({batch, k}, at::kBool);
  const std::vector<int64_t> none;
  bool any = false;
  for (int64_t b = 0; b < batch; ++b) {
    const auto marked = wanted(ids.data_ptr<int64_t>() + b * length, length,
                               size_t(b) < forced.size() ? forced[size_t(b)] : none);
    bool* row = blocked.data_ptr<bool>() + b * k;
    for (int64_t c = 0; c < k; ++c) {
      row[c] = !marked[size_t(columns.data_ptr<int64_t>()[c])];
      any = any || row[c];
    }
  }
  return any ? blocked : at::Tensor();
}

std::string Shortlist::describe() const {
  std::vector<char> reachable(static_cast<size_t>(tgt_vocab_size_), 0);
  for (const int64_t id : always_) reachable[size_t(id)] = 1;
  for (const auto& list : by_source_) {
    for (const int64_t id : list) reachable[size_t(id)] = 1;
  }
  const auto count = std::count(reachable.begin(), reachable.end(), 1);
  return std::to_string(options_.per_source) + " per source piece, " +
         std::to_string(options_.frequent) + " frequent (" + std::to_string(count) + " of " +
         std::to_string(tgt_vocab_size_) + " target pieces reachable)";
}

}  // namespace nmt
