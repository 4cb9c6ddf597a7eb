// The sample of the training corpora that SentencePiece trains on (declared in data/dataset.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/languages.h"
#include "data/batching.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/line_reader.h"
#include "data/mixing.h"

namespace nmt {
namespace {

/// A line of the sample: its random key, its position among the lines with a non-empty side,
/// its sides and their characters.
struct SampledLine {
  uint64_t key = 0;
  size_t index = 0;
  std::string src, tgt;
  size_t src_characters = 0, tgt_characters = 0;
};

/// What a model trains on of two sides: a joint model both, separate models one each (the
/// larger counts).
size_t per_model(bool joint, size_t src, size_t tgt) {
  return joint ? src + tgt : std::max(src, tgt);
}

/// Priority sampling: every line draws a random key, and the sample is the lines of smallest key
/// that fit both bounds, taken by increasing key up to the first that does not fit: a uniform
/// random sample whose size adapts to the lines' lengths. Streaming, that is a max-heap on the
/// key: a line pushes out those of largest key until the rest fit, and a line whose key is not
/// below the key of the last line pushed out (`stop_`) would never be kept.
class Reservoir {
 public:
  explicit Reservoir(const DataConfig& data)
      : joint_(data.joint_vocab),
        max_lines_(
            size_t(joint_ ? std::max<int64_t>(1, data.spm_sentences / 2) : data.spm_sentences)),
        max_characters_(size_t(data.spm_characters)) {}

  /// Whether a line of this key would be kept now.
  bool wants(uint64_t key) const { return key < stop_; }

  void offer(SampledLine line) {
    line.src_characters = utf8_characters(line.src);
    line.tgt_characters = utf8_characters(line.tgt);
    src_characters_ += line.src_characters;
    tgt_characters_ += line.tgt_characters;
    heap_.push_back(std::move(line));
    std::push_heap(heap_.begin(), heap_.end(), by_key);
    while (heap_.size() > max_lines_ || characters() > max_characters_) {
      std::pop_heap(heap_.begin(), heap_.end(), by_key);
      const SampledLine& out = heap_.back();
      src_characters_ -= out.src_characters;
      tgt_characters_ -= out.tgt_characters;
      stop_ = out.key;
      stop_characters_ = per_model(joint_, out.src_characters, out.tgt_characters);
      heap_.pop_back();
    }
  }

  /// The sample of `lines` lines, in corpus order.
  SpmSample take(size_t lines, int64_t spm_characters);

 private:
  static bool by_key(const SampledLine& a, const SampledLine& b) {
    return a.key != b.key ? a.key < b.key : a.index < b.index;
  }
  size_t characters() const { return per_model(joint_, src_characters_, tgt_characters_); }

  bool joint_;
  size_t max_lines_, max_characters_;
  std::vector<SampledLine> heap_;
  size_t src_characters_ = 0, tgt_characters_ = 0;  // of the lines in heap_
  uint64_t stop_ = std::numeric_limits<uint64_t>::max();
  size_t stop_characters_ = 0;  // of the line that set stop_
};

SpmSample Reservoir::take(size_t lines, int64_t spm_characters) {
  if (heap_.empty()) {
    throw Error("data.spm_characters = " + std::to_string(spm_characters) +
                " leaves SentencePiece no sentence: the first line drawn has " +
                std::to_string(stop_characters_) + " characters per model; raise it");
  }
  // Corpus order, so that corpora no larger than the sample give SentencePiece every line in the
  // order it always had (and the same model as before sampling existed).
  std::sort(heap_.begin(), heap_.end(),
            [](const SampledLine& a, const SampledLine& b) { return a.index < b.index; });
  SpmSample sample;
  sample.lines = lines;
  sample.sampled = heap_.size();
  sample.characters = characters();
  for (auto& line : heap_) {
    if (!line.src.empty()) sample.src.push_back(std::move(line.src));
    if (!line.tgt.empty()) sample.tgt.push_back(std::move(line.tgt));
  }
  sample.sentences = per_model(joint_, sample.src.size(), sample.tgt.size());
  heap_.clear();
  return sample;
}

/// "spm": a generator stream of its own, unrelated to the batch order's.
constexpr uint32_t kSpmSampleStream = 0x73706d;

/// data.sampling_temperature's factor per data.train corpus (1 for all at T = 1 or one pair):
/// the corpora's non-empty lines are counted first, then weighted as apply_sampling_temperature
/// weights the training pairs.
std::vector<double> temperature_factors(const DataConfig& data) {
  std::vector<double> factors(data.train.size(), 1.0);
  if (data.sampling_temperature == 1.0 || trained_pairs(data).size() < 2) return factors;
  std::vector<CorpusPart> parts;
  std::string src, tgt;
  for (const auto& corpus : data.train) {
    PairReader reader(data, corpus);
    size_t lines = 0;
    while (reader.next(src, tgt))
      lines += !(trim_sentence(src).empty() && trim_sentence(tgt).empty());
    CorpusPart part;
    part.end = lines;
    part.weight = corpus.weight;
    parts.push_back(part);
  }
  std::vector<CorpusPart> tempered = parts;
  apply_sampling_temperature(data, tempered);
  for (size_t c = 0; c < parts.size(); ++c) factors[c] = tempered[c].weight / parts[c].weight;
  return factors;
}

/// A line's key: the plain draw when no line is weighted (so a run of one pair samples as it
/// always has), else the exponential race's -ln(1 - u) / weight for every line (Efraimidis &
/// Spirakis 2006: the smallest keys are a sample in which a line of weight w is w times as
/// likely), as the bits of a positive double, which order as the values do.
uint64_t weighted_key(uint64_t draw, bool weighted, double weight) {
  if (!weighted) return draw;
  const double u = (static_cast<double>(draw >> 11) + 0.5) * 0x1.0p-53;
  const double key = -std::log1p(-u) / weight;
  uint64_t bits = 0;
  std::memcpy(&bits, &key, sizeof bits);
  return bits;
}

}  // namespace

SpmSample sample_spm_sentences(const DataConfig& data) {
  // data.spm_sentences bounds the sentences each SentencePiece model trains on (a joint model
  // takes both sides of a line, so it gets half as many lines), data.spm_characters their
  // characters: SentencePiece's seed-piece suffix array takes memory per character
  // (docs/scaling.md), so long lines must not fill the sentence bound.
  Reservoir reservoir(data);
  auto rng = epoch_generator(data.seed, 0, kSpmSampleStream);
  size_t seen = 0;
  std::string src, tgt;
  const std::vector<double> factors = temperature_factors(data);
  const bool weighted =
      std::any_of(factors.begin(), factors.end(), [](double f) { return f != 1.0; });
  for (size_t c = 0; c < data.train.size(); ++c) {
    const CorpusSpec& corpus = data.train[c];
    PairReader reader(data, corpus);
    FilterStats stats;
    while (reader.next(src, tgt)) {
      ++stats.read;
      SampledLine line{0, seen, trim_sentence(src), trim_sentence(tgt), 0, 0};
      const bool both = !line.src.empty() && !line.tgt.empty();
      stats.kept += both;
      stats.empty += !both;
      if (line.src.empty() && line.tgt.empty()) continue;
      line.key = weighted_key(rng(), weighted, factors[c]);
      ++seen;
      if (reservoir.wants(line.key)) reservoir.offer(std::move(line));
    }
    check_corpus_not_empty(corpus, stats);
  }
  return reservoir.take(seen, data.spm_characters);
}

}  // namespace nmt
