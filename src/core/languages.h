#pragma once

#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

// Several language pairs in one model (docs/multilingual.md). A data.train / data.valid entry
// may name its own src_lang / tgt_lang; data.src_lang / tgt_lang are the default. A model with
// several target languages is told which one to produce by a tag "<2xx>" (data.lang_tag).

/// One translation direction.
struct LanguagePair {
  std::string src;
  std::string tgt;
  /// "en-de": the key of per-pair metrics and the name in /info and inspect.
  std::string name() const { return src + "-" + tgt; }
  bool operator==(const LanguagePair& other) const { return src == other.src && tgt == other.tgt; }
  bool operator!=(const LanguagePair& other) const { return !(*this == other); }
};

/// The direction `corpus` is read in: its own languages, else data.src_lang / data.tgt_lang.
LanguagePair corpus_pair(const DataConfig& data, const CorpusSpec& corpus);

/// The pairs data.train trains, each once, in the order they first appear.
std::vector<LanguagePair> trained_pairs(const DataConfig& data);

/// The target languages of trained_pairs, each once, in that order.
std::vector<std::string> target_languages(const DataConfig& data);

/// Whether data.train has more than one pair (per-pair validation, tags, pair sampling).
bool multilingual(const DataConfig& data);

/// The tag of target language `lang`: "<2" + lang + ">".
std::string language_tag(const std::string& lang);

/// The tags the run's tokenizer holds as user-defined symbols: one per target language when
/// data.lang_tag is not none, else none.
std::vector<std::string> tag_pieces(const DataConfig& data);

/// `corpora` (data.valid, train.monitor_splits) pair by pair: an entry with its own languages as
/// it is; in a run of several pairs, a split without them once per trained pair (with that
/// pair's languages set), and files or tsv without them in data.src_lang -> data.tgt_lang.
std::vector<CorpusSpec> corpora_per_pair(const DataConfig& data,
                                         const std::vector<CorpusSpec>& corpora);

/// Checks the languages of data.train and data.valid: codes, a pair's two sides differ, several
/// target languages need data.lang_tag, every trained pair has validation data and every
/// validation pair is trained. nmt::Error naming the key and value.
void check_languages(const DataConfig& data);

/// The pair a model trained on `data` translates when asked for target `tgt_lang` ("" = its one
/// target language). An nmt::Error naming `what` (e.g. "--tgt-lang") and the pairs it has when
/// the model was not trained for it, or when it has several targets and none was chosen.
LanguagePair resolve_pair(const DataConfig& data, const std::string& tgt_lang,
                          const std::string& what);

/// "en-de, en-fr" (for messages).
std::string describe_pairs(const std::vector<LanguagePair>& pairs);

}  // namespace nmt
