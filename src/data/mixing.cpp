#include "data/mixing.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/languages.h"
#include "data/batching.h"

namespace nmt {

std::string apply_sampling_temperature(const DataConfig& data, std::vector<CorpusPart>& parts) {
  const auto pairs = trained_pairs(data);
  if (data.sampling_temperature == 1.0 || pairs.size() < 2) return "";
  if (parts.size() != data.train.size()) {
    throw Error("sampling temperature: " + std::to_string(parts.size()) + " corpus parts for " +
                std::to_string(data.train.size()) + " data.train corpora");
  }
  std::vector<size_t> pair_of(parts.size());
  std::vector<double> sizes(pairs.size(), 0.0);
  for (size_t c = 0; c < parts.size(); ++c) {
    const LanguagePair pair = corpus_pair(data, data.train[c]);
    pair_of[c] = size_t(std::find(pairs.begin(), pairs.end(), pair) - pairs.begin());
    sizes[pair_of[c]] += parts[c].weight * double(parts[c].size());
  }
  const double total = std::accumulate(sizes.begin(), sizes.end(), 0.0);
  double tempered_total = 0.0;
  for (const double n : sizes) tempered_total += std::pow(n, 1.0 / data.sampling_temperature);
  std::vector<double> factors(pairs.size(), 1.0);
  std::ostringstream log;
  for (size_t p = 0; p < pairs.size(); ++p) {
    const double share = std::pow(sizes[p], 1.0 / data.sampling_temperature) / tempered_total;
    if (sizes[p] > 0.0) factors[p] = share * total / sizes[p];
    log << (p == 0 ? "" : "\n") << "pair " << pairs[p].name() << ": " << std::fixed
        << std::setprecision(1) << 100.0 * sizes[p] / total << "% of the pairs, sampled "
        << 100.0 * share << "% (T = " << data.sampling_temperature << ")";
  }
  for (size_t c = 0; c < parts.size(); ++c) parts[c].weight *= factors[pair_of[c]];
  return log.str();
}

bool mixes(const std::vector<CorpusPart>& parts) {
  for (const auto& part : parts) {
    if (part.weight != 1.0) return true;
  }
  return false;
}

std::vector<size_t> mix_counts(const std::vector<CorpusPart>& parts) {
  std::vector<size_t> counts;
  for (const auto& part : parts) {
    counts.push_back(size_t(std::llround(part.weight * double(part.size()))));
  }
  return counts;
}

void check_mix_not_empty(const std::vector<CorpusPart>& parts) {
  const auto counts = mix_counts(parts);
  if (std::accumulate(counts.begin(), counts.end(), size_t(0)) > 0) return;
  std::ostringstream s;
  s << "data.train: the corpus mix has no pair per epoch:";
  for (size_t p = 0; p < parts.size(); ++p) {
    // round(w x n) >= 1 needs w x n >= 0.5.
    s << (p == 0 ? " " : "; ") << "'" << parts[p].name << "' has weight " << parts[p].weight
      << " x " << parts[p].size() << " pairs = 0 pairs (a weight of at least "
      << 0.5 / double(std::max<size_t>(parts[p].size(), 1)) << " gives it one)";
  }
  s << "; raise a weight";
  throw Error(s.str());
}

std::vector<size_t> epoch_mix(const std::vector<CorpusPart>& parts, int64_t seed, int64_t epoch) {
  auto rng = epoch_generator(seed, epoch, 0x6d6978);  // "mix": a stream of its own
  const auto counts = mix_counts(parts);
  std::vector<size_t> indices;
  indices.reserve(std::accumulate(counts.begin(), counts.end(), size_t(0)));
  for (size_t p = 0; p < parts.size(); ++p) {
    const size_t n = parts[p].size();
    if (n == 0) continue;
    for (size_t copy = 0; copy < counts[p] / n; ++copy) {
      for (size_t i = parts[p].begin; i < parts[p].end; ++i) indices.push_back(i);
    }
    // The rest: the first `rest` of a Fisher-Yates shuffle drawn front to back (own index
    // draw, as in batching.cpp: std::uniform_int_distribution differs between libraries).
    const size_t rest = counts[p] % n;
    std::vector<size_t> pool(n);
    std::iota(pool.begin(), pool.end(), parts[p].begin);
    for (size_t k = 0; k < rest; ++k) {
      std::swap(pool[k], pool[k + size_t(rng() % (n - k))]);
      indices.push_back(pool[k]);
    }
  }
  return indices;
}

}  // namespace nmt
