#include "data/encoded_corpus.h"

#include <chrono>

#include "data/line_reader.h"

namespace nmt {

TrainCorpus encode_corpora(const DataConfig& data, const std::vector<CorpusSpec>& corpora,
                           const Tokenizer& tokenizer) {
  PairStoreBuilder builder(
      id_bytes_for(std::max(tokenizer.src_vocab_size(), tokenizer.tgt_vocab_size())));
  TrainCorpus out;
  const auto limit = static_cast<size_t>(data.max_len);
  std::string src, tgt;
  for (const auto& corpus : corpora) {
    FilterStats stats;
    const size_t begin = builder.size();
    PairReader reader(data, corpus);
    while (reader.next(src, tgt)) {
      ++stats.read;
      const std::string s = trim_sentence(src), t = trim_sentence(tgt);
      if (s.empty() || t.empty()) {
        ++stats.empty;
        continue;
      }
      const auto src_ids = tokenizer.encode_src(s);
      const auto tgt_ids = tokenizer.encode_tgt(t);
      if (src_ids.size() > limit || tgt_ids.size() > limit) {
        ++stats.too_long;
        continue;
      }
      stats.src_tokens += static_cast<int64_t>(src_ids.size());
      stats.tgt_tokens += static_cast<int64_t>(tgt_ids.size());
      builder.add(src_ids, tgt_ids);
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
