#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/augment.h"
#include "data/batching.h"
#include "data/tokenizer.h"

namespace nmt {

/// What filtering did to one split.
struct FilterStats {
  size_t read = 0;         ///< pairs read
  size_t kept = 0;         ///< pairs kept
  size_t empty = 0;        ///< dropped: a side is empty (after trimming whitespace)
  size_t too_long = 0;     ///< dropped: a side longer than data.max_len pieces
  int64_t src_tokens = 0;  ///< pieces on the source side of kept pairs (no eos)
  int64_t tgt_tokens = 0;  ///< pieces on the target side of kept pairs (no eos)

  /// The fields an encoded corpus file's header records as JSON (core/json_fields.h).
  template <class F>
  void fields(F&& f) {
    f("read", read), f("kept", kept), f("empty", empty), f("too_long", too_long);
    f("src_tokens", src_tokens), f("tgt_tokens", tgt_tokens);
  }
};

/// Where one corpus's pairs sit in an EncodedSplit that holds several (data.train).
struct CorpusPart {
  std::string name;     ///< CorpusSpec::name()
  size_t begin = 0;     ///< first example of this corpus
  size_t end = 0;       ///< one past its last
  double weight = 1.0;  ///< CorpusSpec::weight (data/mixing.h)
  FilterStats stats;
  size_t size() const { return end - begin; }
};

/// `s` without leading and trailing whitespace (the form corpora are encoded and trained in).
std::string trim_sentence(const std::string& s);

/// An nmt::Error naming `corpus` when `stats` kept no pair (a wrong file, a wrong column).
void check_corpus_not_empty(const CorpusSpec& corpus, const FilterStats& stats);

/// Adds `part`'s counts to `total`.
void add_filter_stats(FilterStats& total, const FilterStats& part);

/// One or more encoded corpora with their raw text (kept pairs only, aligned with `examples`).
struct EncodedSplit {
  std::vector<Example> examples;
  std::vector<std::string> src_text;
  std::vector<std::string> tgt_text;
  FilterStats stats;              ///< all corpora together
  std::vector<CorpusPart> parts;  ///< one per corpus, in order, covering `examples`
};

/// Reads `corpus` in the configured direction, encodes it with `tokenizer`, drops empty pairs
/// and (when `filter_long`) pairs with a side over data.max_len pieces. A corpus left with no
/// pair is an nmt::Error naming it and saying why.
EncodedSplit load_corpus(const DataConfig& data, const CorpusSpec& corpus,
                         const Tokenizer& tokenizer, bool filter_long = true);

/// load_corpus of a split of data.dir.
EncodedSplit load_split(const DataConfig& data, const std::string& split,
                        const Tokenizer& tokenizer, bool filter_long = true);

/// The corpora of `corpora` loaded one after another into one EncodedSplit, one part each.
EncodedSplit load_corpora(const DataConfig& data, const std::vector<CorpusSpec>& corpora,
                          const Tokenizer& tokenizer);

/// Whether data.subword_alpha turns subword regularization on.
inline bool samples_subwords(const DataConfig& data) { return data.subword_alpha > 0.0; }

/// Whether the training pairs change from epoch to epoch (subword sampling or data.augment), so
/// that the trainer keeps their text and calls epoch_examples each epoch.
inline bool resegments_each_epoch(const DataConfig& data) {
  return samples_subwords(data) || data.augment.any();
}

/// The training examples of one epoch: every kept pair of `split`, modified by data.augment
/// (data/augment.h) and, under subword regularization, re-segmented by Tokenizer::sample_src/
/// sample_tgt with data.subword_nbest and subword_alpha; the same for the same (data.seed, epoch)
/// (so a resumed epoch gets its batches back) and different across epochs. A pair neither
/// modifies keeps split's ids; a side that comes out longer than data.max_len keeps the best
/// segmentation of its text (`split.examples`), so the pairs are exactly split's. `counts`, when
/// given, gets what data.augment did.
std::vector<Example> epoch_examples(const DataConfig& data, const EncodedSplit& split,
                                    const Tokenizer& tokenizer, int64_t epoch,
                                    AugmentCounts* counts = nullptr);

/// How prepare_tokenizer came by the tokenizer.
struct TokenizerReport {
  bool trained = false;       ///< trained now (else copied from data.spm_model or loaded)
  size_t lines = 0;           ///< trained: lines with a non-empty side read from data.train
  size_t sampled = 0;         ///< trained: of those, the lines SentencePiece trained on
  size_t sentences = 0;       ///< trained: the sentences of the (larger) model, of those lines
  size_t characters = 0;      ///< trained: their characters (Unicode code points)
  int64_t threads = 0;        ///< trained: SentencePiece threads (spm_train_threads)
  double read_seconds = 0;    ///< trained: reading and sampling the corpora
  double train_seconds = 0;   ///< trained: SentencePiece training
  int64_t tgt_chars = 0;      ///< trained: characters of the sampled target sides
  int64_t tgt_fullwidth = 0;  ///< trained: of those, full-width forms (core/utf8.h)
};

/// A warning when the tokenizer just trained normalises full-width punctuation that its
/// targets write by convention (Chinese "，"): every translation would have ASCII in its place.
/// Empty otherwise.
std::string normalization_warning(const DataConfig& data, const TokenizerReport& report);

/// The file in a run directory that holds the word casing learned from its training sources.
inline constexpr const char* kWordCasingFile = "word_casing.json";

/// The tokenizer of a run, with the word casing of its training sources (data/word_casing.h,
/// `kWordCasingFile` in `run_dir`, learned from the same sample when missing).
/// The tokenizer: copies data.spm_model (and spm_model_tgt) into `run_dir` when given
/// and the run has no last.pt yet; else loads it from `run_dir` if its model file(s) exist
/// (Tokenizer::model_files); else trains it on a sample of the data.train corpora
/// (sample_spm_sentences) and writes it there. `trained`, when given, says whether it was
/// trained; `report`, when given, gets the details.
Tokenizer prepare_tokenizer(const DataConfig& data, const std::filesystem::path& run_dir,
                            bool* trained = nullptr, TokenizerReport* report = nullptr);

/// The sentences SentencePiece trains on.
struct SpmSample {
  std::vector<std::string> src;  ///< the non-empty source sides of the sampled lines
  std::vector<std::string> tgt;  ///< the non-empty target sides of the sampled lines
  size_t lines = 0;              ///< lines with a non-empty side, all corpora together
  size_t sampled = 0;            ///< of those, the lines sampled
  size_t sentences = 0;          ///< the sentences of the (larger) model: both sides if joint
  size_t characters = 0;         ///< their characters (Unicode code points)
};

/// Streams every data.train corpus once (trimmed pairs, each line once) and keeps a random
/// sample of its lines that have a non-empty side, in corpus order, within two bounds per model:
/// data.spm_sentences sentences (a joint model trains on both sides of a line, so it samples half
/// as many lines) and data.spm_characters characters. Every line has a random key from a
/// generator seeded from data.seed; the sample is the lines of smallest key, taken by increasing
/// key up to the first that does not fit (priority sampling). Every such line when they all fit.
/// A corpus with no usable pair is an nmt::Error, as is a data.spm_characters below the first
/// line drawn.
SpmSample sample_spm_sentences(const DataConfig& data);

/// A human-readable multi-line summary of a split (pairs kept/filtered, tokens per side,
/// average pieces per sentence).
std::string describe(const std::string& split, const FilterStats& stats);

/// describe() of each part of a multi-corpus split (with its weight), then of the whole under
/// `name`; just describe(name, stats) for one corpus of weight 1.
std::string describe_parts(const std::string& name, const std::vector<CorpusPart>& parts,
                           const FilterStats& stats);

}  // namespace nmt
