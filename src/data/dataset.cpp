#include "data/dataset.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/languages.h"
#include "core/utf8.h"
#include "data/corpus.h"
#include "data/language_tags.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

}  // namespace

std::string trim_sentence(const std::string& s) {
  const char* space = " \t\r\n\f\v";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

/// An empty corpus is a mistake (a wrong file, a wrong column), never something to train on.
void check_corpus_not_empty(const CorpusSpec& corpus, const FilterStats& stats) {
  if (stats.kept > 0) return;
  throw Error("empty corpus: " + corpus.describe() + " has no usable sentence pair (" +
              std::to_string(stats.read) + " read, " + std::to_string(stats.empty) +
              " with an empty side, " + std::to_string(stats.too_long) +
              " longer than data.max_len pieces)");
}

void add_filter_stats(FilterStats& total, const FilterStats& part) {
  total.read += part.read;
  total.kept += part.kept;
  total.empty += part.empty;
  total.too_long += part.too_long;
  total.src_tokens += part.src_tokens;
  total.tgt_tokens += part.tgt_tokens;
}

EncodedSplit load_split(const DataConfig& data, const std::string& split,
                        const Tokenizer& tokenizer, bool filter_long) {
  return load_corpus(data, CorpusSpec::of_split(split), tokenizer, filter_long);
}

EncodedSplit load_corpora(const DataConfig& data, const std::vector<CorpusSpec>& corpora,
                          const Tokenizer& tokenizer) {
  EncodedSplit all;
  for (const auto& corpus : corpora) {
    EncodedSplit one = load_corpus(data, corpus, tokenizer);
    const size_t begin = all.examples.size();
    for (size_t i = 0; i < one.examples.size(); ++i) {
      all.examples.push_back(std::move(one.examples[i]));
      all.src_text.push_back(std::move(one.src_text[i]));
      all.tgt_text.push_back(std::move(one.tgt_text[i]));
    }
    all.parts.push_back({corpus.name(), begin, all.examples.size(), corpus.weight, one.stats});
    add_filter_stats(all.stats, one.stats);
  }
  return all;
}

EncodedSplit load_corpus(const DataConfig& data, const CorpusSpec& corpus,
                         const Tokenizer& tokenizer, bool filter_long) {
  ParallelText text = read_corpus(data, corpus);
  const LanguageTags tags(data, tokenizer);
  const std::string tgt_lang = corpus_pair(data, corpus).tgt;
  EncodedSplit out;
  out.stats.read = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    std::string src = trim_sentence(text.src[i]);
    std::string tgt = trim_sentence(text.tgt[i]);
    if (src.empty() || tgt.empty()) {
      ++out.stats.empty;
      continue;
    }
    Example example{tokenizer.encode_src(src), tokenizer.encode_tgt(tgt)};
    // A tagged side counts its tag against data.max_len.
    const auto limit = static_cast<size_t>(data.max_len);
    if (filter_long && (example.src.size() + tags.extra(true) > limit ||
                        example.tgt.size() + tags.extra(false) > limit)) {
      ++out.stats.too_long;
      continue;
    }
    out.stats.src_tokens += static_cast<int64_t>(example.src.size());
    out.stats.tgt_tokens += static_cast<int64_t>(example.tgt.size());
    if (tags.active()) {
      const std::string where = corpus.describe() + " pair " + std::to_string(i + 1);
      tags.check_text(example.src, /*source_side=*/true, where);
      tags.check_text(example.tgt, /*source_side=*/false, where);
      tags.apply(example, tgt_lang);
    }
    out.examples.push_back(std::move(example));
    out.src_text.push_back(std::move(src));
    out.tgt_text.push_back(std::move(tgt));
  }
  out.stats.kept = out.examples.size();
  check_corpus_not_empty(corpus, out.stats);
  out.parts.push_back({corpus.name(), 0, out.examples.size(), corpus.weight, out.stats});
  return out;
}

std::vector<Example> epoch_examples(const DataConfig& data, const EncodedSplit& split,
                                    const Tokenizer& tokenizer, int64_t epoch,
                                    AugmentCounts* counts) {
  // (seed, epoch) as for the batch order, on streams of their own.
  const auto seed = static_cast<uint32_t>(epoch_generator(data.seed, epoch, 0x5eb3)());
  auto augment_rng = epoch_generator(data.seed, epoch, 0xa06);
  const bool sampling = samples_subwords(data), augmenting = data.augment.any();
  std::vector<Example> examples(split.examples.size());
  const auto limit = static_cast<size_t>(data.max_len);
  const LanguageTags tags(data, tokenizer);
  AugmentCounts augmented;
  const auto work = [&] {
    for (size_t p = 0; p < split.parts.size(); ++p) {
      // The languages of each part (one per data.train corpus), for its tags and case mappings.
      const LanguagePair pair = p < data.train.size() ? corpus_pair(data, data.train[p])
                                                      : LanguagePair{data.src_lang, data.tgt_lang};
      for (size_t i = split.parts[p].begin; i < split.parts[p].end; ++i) {
        std::string src = split.src_text[i], tgt = split.tgt_text[i];
        AugmentCounts drawn;
        const bool changed = augmenting && augment_pair(data.augment, pair.src, pair.tgt,
                                                        augment_rng, src, tgt, drawn);
        if (!sampling && !changed) {
          add_counts(augmented, drawn);
          examples[i] = split.examples[i];
          continue;
        }
        auto src_ids = sampling ? tokenizer.sample_src(src, data.subword_nbest, data.subword_alpha)
                                : tokenizer.encode_src(src);
        auto tgt_ids = sampling ? tokenizer.sample_tgt(tgt, data.subword_nbest, data.subword_alpha)
                                : tokenizer.encode_tgt(tgt);
        bool src_fits = !src_ids.empty() && src_ids.size() + tags.extra(true) <= limit;
        bool tgt_fits = !tgt_ids.empty() && tgt_ids.size() + tags.extra(false) <= limit;
        if (changed && !(src_fits && tgt_fits)) {
          // A modification of both sides applies to both or to neither: an upper-cased target
          // beside a source as written would teach the model to shout.
          drawn = AugmentCounts{};
          drawn.pairs = 1;
          drawn.too_long = 1;
          add_counts(augmented, drawn);
          if (!sampling) {
            examples[i] = split.examples[i];
            continue;
          }
          src_ids = tokenizer.sample_src(split.src_text[i], data.subword_nbest, data.subword_alpha);
          tgt_ids = tokenizer.sample_tgt(split.tgt_text[i], data.subword_nbest, data.subword_alpha);
          src_fits = src_ids.size() + tags.extra(true) <= limit;
          tgt_fits = tgt_ids.size() + tags.extra(false) <= limit;
        } else {
          add_counts(augmented, drawn);
        }
        Example modified{std::move(src_ids), std::move(tgt_ids)};
        tags.apply(modified, pair.tgt);
        // A sample too long keeps the best segmentation of its text (tagged as it was).
        examples[i].src = src_fits ? std::move(modified.src) : split.examples[i].src;
        examples[i].tgt = tgt_fits ? std::move(modified.tgt) : split.examples[i].tgt;
      }
    }
  };
  if (sampling) {
    Tokenizer::with_sampling_seed(seed, work);
  } else {
    work();
  }
  if (counts) *counts = augmented;
  return examples;
}

namespace {

/// The run's word casing (data/word_casing.h): `run_dir`/word_casing.json when an earlier
/// attempt wrote it, else learned from the source sides of `sample` (sampled now when null)
/// and written there.
void attach_word_casing(Tokenizer& tokenizer, const DataConfig& data, const fs::path& run_dir,
                        const SpmSample* sample) {
  const fs::path file = run_dir / kWordCasingFile;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    tokenizer.set_word_casing(WordCasing::read(file));
    return;
  }
  SpmSample drawn;
  if (sample == nullptr) {
    drawn = sample_spm_sentences(data);
    sample = &drawn;
  }
  WordCasing casing = WordCasing::learn(sample->src, data.src_lang);
  write_file_atomically(file, casing.to_json().dump(1) + "\n", "word casing");
  tokenizer.set_word_casing(std::move(casing));
}

}  // namespace

Tokenizer prepare_tokenizer(const DataConfig& data, const fs::path& run_dir, bool* trained,
                            TokenizerReport* report) {
  const auto files = Tokenizer::model_files(data, run_dir);
  std::error_code ec;
  bool all_present = true;
  for (const auto& file : files) all_present = all_present && fs::exists(file, ec);
  TokenizerReport done;
  // Until the run has a checkpoint, data.spm_model wins over what an earlier attempt left.
  if (!data.spm_model.empty() && !fs::exists(run_dir / "last.pt", ec)) {
    if (trained) *trained = false;
    if (report) *report = done;
    Tokenizer tokenizer = Tokenizer::reuse(data, run_dir);
    attach_word_casing(tokenizer, data, run_dir, nullptr);
    return tokenizer;
  }
  if (trained) *trained = !all_present;
  if (all_present) {
    if (report) *report = done;
    Tokenizer tokenizer = Tokenizer::load(files);
    attach_word_casing(tokenizer, data, run_dir, nullptr);
    return tokenizer;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const SpmSample sample = sample_spm_sentences(data);
  const auto sampled = Clock::now();
  done.trained = true;
  done.lines = sample.lines;
  done.sampled = sample.sampled;
  done.sentences = sample.sentences;
  done.characters = sample.characters;
  done.threads = spm_train_threads(done.sentences);
  for (const auto& line : sample.tgt) {
    for (const char32_t c : utf8_decode(line))
      ++done.tgt_chars, done.tgt_fullwidth += is_fullwidth_ascii(c);
  }
  Tokenizer tokenizer = Tokenizer::train(data, sample.src, sample.tgt, run_dir);
  done.read_seconds = std::chrono::duration<double>(sampled - start).count();
  done.train_seconds = std::chrono::duration<double>(Clock::now() - sampled).count();
  fs::remove(run_dir / kWordCasingFile, ec);  // an earlier attempt's, for another tokenizer
  attach_word_casing(tokenizer, data, run_dir, &sample);
  if (report) *report = done;
  return tokenizer;
}

std::string normalization_warning(const DataConfig& data, const TokenizerReport& report) {
  if (!report.trained || data.normalization == Normalization::kIdentity ||
      !writes_fullwidth(report.tgt_fullwidth, report.tgt_chars)) {
    return "";
  }
  return "warning: " + std::to_string(report.tgt_fullwidth) + " of the " +
         std::to_string(report.tgt_chars) +
         " target characters the tokenizer trained on are full-width forms such as \"，\" and "
         "\"？\", which data.normalization=" +
         choice_name(data.normalization) +
         " makes ASCII: translations will have \",\" and \"?\" where the references keep "
         "them. data.normalization=identity (or \"auto\") keeps the text as written";
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

namespace nmt {

std::string describe_parts(const std::string& name, const std::vector<CorpusPart>& parts,
                           const FilterStats& stats) {
  if (parts.size() == 1 && parts[0].weight == 1.0) return describe(name, stats);
  std::string text;
  for (const auto& part : parts) {
    text += describe("  " + part.name + " (weight " + format("%g", part.weight) + ")", part.stats);
  }
  return text + describe(name + " (all corpora, each pair once)", stats);
}

}  // namespace nmt
