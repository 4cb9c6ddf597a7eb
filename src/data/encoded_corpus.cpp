#include "data/encoded_corpus.h"

#include <algorithm>
#include <thread>

#include "data/language_tags.h"
#include "data/line_reader.h"

namespace nmt {
namespace {

/// Pairs read at a time, then encoded by all threads together.
constexpr size_t kEncodeChunk = 16384;

/// One pair read, trimmed, and (when both sides are non-empty) encoded.
struct PairToEncode {
  std::string src, tgt;
  Example ids;
};

/// Encodes the pairs of `chunk` with both sides non-empty, on up to `threads` threads (each
/// a contiguous slice). SentencePiece's encoding is a pure function, so the result does not
/// depend on the thread count.
void encode_chunk(std::vector<PairToEncode>& chunk, const Tokenizer& tokenizer, size_t threads) {
  const auto encode = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      PairToEncode& pair = chunk[i];
      if (pair.src.empty() || pair.tgt.empty()) continue;
      pair.ids.src = tokenizer.encode_src(pair.src);
      pair.ids.tgt = tokenizer.encode_tgt(pair.tgt);
    }
  };
  threads = std::max<size_t>(1, std::min(threads, chunk.size() / 256));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    workers.emplace_back(encode, chunk.size() * t / threads, chunk.size() * (t + 1) / threads);
  }
  encode(0, chunk.size() / threads);
  for (auto& worker : workers) worker.join();
}

/// Filters the encoded `chunk` as load_corpus does and adds the pairs it keeps to `builder`.
void keep_encoded(std::vector<PairToEncode>& chunk, size_t max_len, const LanguageTags& tags,
                  const std::string& tgt_lang, const std::string& what, FilterStats& stats,
                  PairStoreBuilder& builder) {
  for (auto& pair : chunk) {
    ++stats.read;
    if (pair.src.empty() || pair.tgt.empty()) {
      ++stats.empty;
      continue;
    }
    if (pair.ids.src.size() + tags.extra(true) > max_len ||
        pair.ids.tgt.size() + tags.extra(false) > max_len) {
      ++stats.too_long;
      continue;
    }
    stats.src_tokens += static_cast<int64_t>(pair.ids.src.size());
    stats.tgt_tokens += static_cast<int64_t>(pair.ids.tgt.size());
    if (tags.active()) {
      const std::string where = what + " pair " + std::to_string(stats.read);
      tags.check_text(pair.ids.src, /*source_side=*/true, where);
      tags.check_text(pair.ids.tgt, /*source_side=*/false, where);
      tags.apply(pair.ids, tgt_lang);
    }
    builder.add(pair.ids.src, pair.ids.tgt);
  }
}

}  // namespace

TrainCorpus encode_corpora(const DataConfig& data, const std::vector<CorpusSpec>& corpora,
                           const Tokenizer& tokenizer) {
  PairStoreBuilder builder(
      id_bytes_for(std::max(tokenizer.src_vocab_size(), tokenizer.tgt_vocab_size())));
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  TrainCorpus out;
  const LanguageTags tags(data, tokenizer);
  std::vector<PairToEncode> chunk;
  std::string src, tgt;
  for (const auto& corpus : corpora) {
    FilterStats stats;
    const size_t begin = builder.size();
    PairReader reader(data, corpus);
    for (bool more = true; more;) {
      chunk.clear();
      while (chunk.size() < kEncodeChunk && (more = reader.next(src, tgt))) {
        chunk.push_back({trim_sentence(src), trim_sentence(tgt), {}});
      }
      encode_chunk(chunk, tokenizer, threads);
      keep_encoded(chunk, static_cast<size_t>(data.max_len), tags, corpus_pair(data, corpus).tgt,
                   corpus.describe(), stats, builder);
    }
    stats.kept = builder.size() - begin;
    check_corpus_not_empty(corpus, stats);
    out.parts.push_back({corpus.name(), begin, builder.size(), corpus.weight, stats});
    add_filter_stats(out.stats, stats);
  }
  out.pairs = builder.finish();
  return out;
}

std::filesystem::path encoded_corpus_file(const std::filesystem::path& run_dir) {
  return run_dir / "train.corpus";
}

}  // namespace nmt
