#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nmt {

/// How a corpus is stored: a split of data.dir, two aligned files, or one tab-separated file.
enum class CorpusKind { kSplit, kFiles, kTsv };

/// One parallel corpus as a config names it (data.train, data.valid, train.monitor_splits,
/// nmt evaluate --corpus). In JSON: a split name ("train"), {"src": PATH, "tgt": PATH}, or
/// {"tsv": PATH, "src_column": 0, "tgt_column": 1}; an object may add "weight" (data.train
/// only) and "src_lang" / "tgt_lang" (its direction, when it differs from data.src_lang /
/// data.tgt_lang: several pairs in one model, docs/multilingual.md), and a split may be written
/// {"split": NAME, "weight": W}. Relative paths are taken from
/// the working directory, as data.dir is. Files are plain or gzip (recognised by content).
struct CorpusSpec {
  CorpusKind kind = CorpusKind::kSplit;
  std::string split;       ///< kSplit: <data.dir>/<split>.<lang>[.gz]
  std::string src;         ///< kFiles: the source-side file
  std::string tgt;         ///< kFiles: the target-side file
  std::string tsv;         ///< kTsv: the tab-separated file
  int64_t src_column = 0;  ///< kTsv: 0-based column of the source side
  int64_t tgt_column = 1;  ///< kTsv: 0-based column of the target side
  /// data.train only: this corpus contributes round(weight x its pairs) pairs per epoch
  /// (data/mixing.h); 1 = each pair once.
  double weight = 1.0;
  std::string src_lang;  ///< its source language; empty = data.src_lang
  std::string tgt_lang;  ///< its target language; empty = data.tgt_lang

  static CorpusSpec of_split(const std::string& name);
  /// A short name for logs and metrics keys: the split, or the (first) file's name without
  /// ".gz" and its last extension ("corpus.ja.gz" -> "corpus").
  std::string name() const;
  /// What it is, for messages: "split 'train'", "files 'a.ja', 'a.en'", "tsv 'x.tsv' (columns
  /// 0, 1)"; with " (en->fr)" when it names its languages.
  std::string describe() const;
  /// Throws nmt::Error naming `key` when a field is out of range.
  void validate(const std::string& key) const;
  bool operator==(const CorpusSpec& other) const;
  bool operator!=(const CorpusSpec& other) const { return !(*this == other); }
};

/// One spec from JSON: a split name or an object as above. Wrong types and unknown keys are
/// nmt::Errors naming `where`.
CorpusSpec corpus_from_json(const nlohmann::json& value, const std::string& where);
/// A split of weight 1 as its name, anything else as an object.
nlohmann::json corpus_to_json(const CorpusSpec& spec);
/// A list of specs from JSON: an array of specs, one spec object, or a string of
/// comma-separated split names (handy in --set: data.train=train,extra).
std::vector<CorpusSpec> corpus_list_from_json(const nlohmann::json& value,
                                              const std::string& where);
nlohmann::json corpus_list_to_json(const std::vector<CorpusSpec>& specs);
/// A list of specs from command-line text: JSON (an object or an array), else comma-separated
/// split names.
std::vector<CorpusSpec> corpus_list_from_text(const std::string& text, const std::string& where);

}  // namespace nmt
