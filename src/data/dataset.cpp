#include "data/dataset.h"

#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "data/corpus.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  const char* space = " \t\r\n\f\v";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

/// Reads a split in the configured direction (de->en simply reads the .de file as source).
ParallelText read_split(const DataConfig& data, const std::string& split) {
  return read_parallel(split_file(data.dir, split, data.src_lang),
                       split_file(data.dir, split, data.tgt_lang));
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

}  // namespace

EncodedSplit load_split(const DataConfig& data, const std::string& split,
                        const Tokenizer& tokenizer, bool filter_long) {
  ParallelText text = read_split(data, split);
  EncodedSplit out;
  out.stats.read = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    std::string src = trim(text.src[i]);
    std::string tgt = trim(text.tgt[i]);
    if (src.empty() || tgt.empty()) {
      ++out.stats.empty;
      continue;
    }
    Example example{tokenizer.encode_src(src), tokenizer.encode_tgt(tgt)};
    const auto limit = static_cast<size_t>(data.max_len);
    if (filter_long && (example.src.size() > limit || example.tgt.size() > limit)) {
      ++out.stats.too_long;
      continue;
    }
    out.stats.src_tokens += static_cast<int64_t>(example.src.size());
    out.stats.tgt_tokens += static_cast<int64_t>(example.tgt.size());
    out.examples.push_back(std::move(example));
    out.src_text.push_back(std::move(src));
    out.tgt_text.push_back(std::move(tgt));
  }
  out.stats.kept = out.examples.size();
  return out;
}

std::vector<Example> sample_examples(const DataConfig& data, const EncodedSplit& split,
                                     const Tokenizer& tokenizer, int64_t epoch) {
  // (seed, epoch) as for the batch order, on another stream.
  const auto seed = static_cast<uint32_t>(epoch_generator(data.seed, epoch, 0x5eb3)());
  std::vector<Example> examples(split.examples.size());
  const auto limit = static_cast<size_t>(data.max_len);
  Tokenizer::with_sampling_seed(seed, [&] {
    for (size_t i = 0; i < examples.size(); ++i) {
      auto src = tokenizer.sample_src(split.src_text[i], data.subword_nbest, data.subword_alpha);
      auto tgt = tokenizer.sample_tgt(split.tgt_text[i], data.subword_nbest, data.subword_alpha);
      examples[i].src = src.size() <= limit ? std::move(src) : split.examples[i].src;
      examples[i].tgt = tgt.size() <= limit ? std::move(tgt) : split.examples[i].tgt;
    }
  });
  return examples;
}

Tokenizer prepare_tokenizer(const DataConfig& data, const fs::path& run_dir, bool* trained) {
  const auto files = Tokenizer::model_files(data, run_dir);
  std::error_code ec;
  bool all_present = true;
  for (const auto& file : files) all_present = all_present && fs::exists(file, ec);
  if (trained) *trained = !all_present;
  if (all_present) return Tokenizer::load(files);

  // Train on the non-empty training sentences of each side, as load_split will see them.
  ParallelText text = read_split(data, data.train_split);
  std::vector<std::string> src, tgt;
  src.reserve(text.size());
  tgt.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string s = trim(text.src[i]);
    std::string t = trim(text.tgt[i]);
    if (!s.empty()) src.push_back(std::move(s));
    if (!t.empty()) tgt.push_back(std::move(t));
  }
  return Tokenizer::train(data, src, tgt, run_dir);
}

std::string describe(const std::string& split, const FilterStats& stats) {
  const auto kept = static_cast<double>(stats.kept);
  const auto per_sentence = [&](int64_t tokens) {
    return stats.kept == 0 ? std::string("-") : format("%.2f", static_cast<double>(tokens) / kept);
  };
  std::ostringstream out;
  out << split << ": " << stats.read << " pairs read, " << stats.kept << " kept, "
      << (stats.empty + stats.too_long) << " filtered (" << stats.empty << " empty, "
      << stats.too_long << " too long)\n";
  out << "  tokens: source " << stats.src_tokens << ", target " << stats.tgt_tokens
      << " (pieces, no eos)\n";
  out << "  average pieces per sentence: source " << per_sentence(stats.src_tokens) << ", target "
      << per_sentence(stats.tgt_tokens) << "\n";
  return out.str();
}

}  // namespace nmt
