// The sample of the training corpora that SentencePiece trains on (declared in data/dataset.h).
#include <algorithm>

#include "data/batching.h"
#include "data/dataset.h"
#include "data/line_reader.h"

namespace nmt {
namespace {

/// A line of the sample: its position among the lines with a non-empty side, and its sides.
struct SampledLine {
  size_t index = 0;
  std::string src, tgt;
};

/// "spm": a generator stream of its own, unrelated to the batch order's.
constexpr uint32_t kSpmSampleStream = 0x73706d;

}  // namespace

SpmSample sample_spm_sentences(const DataConfig& data) {
  // data.spm_sentences bounds the sentences each SentencePiece model trains on: a joint model
  // takes both sides of a line, so it gets half as many lines. (SentencePiece's seed-piece
  // suffix array over 2,000,000 sentences, 200 million characters, took 5 GB: docs/scaling.md.)
  const auto capacity =
      size_t(data.joint_vocab ? std::max<int64_t>(1, data.spm_sentences / 2) : data.spm_sentences);
  auto rng = epoch_generator(data.seed, 0, kSpmSampleStream);
  std::vector<SampledLine> reservoir;
  size_t seen = 0;
  std::string src, tgt;
  for (const auto& corpus : data.train) {
    PairReader reader(data, corpus);
    FilterStats stats;
    while (reader.next(src, tgt)) {
      ++stats.read;
      SampledLine line{seen, trim_sentence(src), trim_sentence(tgt)};
      const bool both = !line.src.empty() && !line.tgt.empty();
      stats.kept += both;
      stats.empty += !both;
      if (line.src.empty() && line.tgt.empty()) continue;
      // Algorithm R (Vitter 1985): line k replaces a random slot with probability capacity/(k+1).
      // The modulo bias of a 64-bit draw is negligible for corpus-sized ranges.
      if (seen < capacity) {
        reservoir.push_back(std::move(line));
      } else {
        const size_t slot = size_t(rng() % (seen + 1));
        if (slot < capacity) reservoir[slot] = std::move(line);
      }
      ++seen;
    }
    check_corpus_not_empty(corpus, stats);
  }
  // Corpus order, so that a corpus no larger than the sample gives SentencePiece every line in
  // the order it always had (and the same model as before sampling existed).
  std::sort(reservoir.begin(), reservoir.end(),
            [](const SampledLine& a, const SampledLine& b) { return a.index < b.index; });
  SpmSample sample;
  sample.lines = seen;
  sample.sampled = reservoir.size();
  for (auto& line : reservoir) {
    if (!line.src.empty()) sample.src.push_back(std::move(line.src));
    if (!line.tgt.empty()) sample.tgt.push_back(std::move(line.tgt));
  }
  return sample;
}

}  // namespace nmt
