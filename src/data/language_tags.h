#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/languages.h"
#include "data/batching.h"
#include "data/tokenizer.h"

namespace nmt {

/// The ids of a model's language tags (data.lang_tag) in its tokenizer, and where they go: a
/// "<2xx>" before the source (source) or as the first target token (target). A model without
/// tags (lang_tag none: every bilingual model) adds nothing.
class LanguageTags {
 public:
  LanguageTags() = default;
  /// The tags of `data` looked up in `tokenizer`; a tag that is not one of its pieces (a reused
  /// data.spm_model without it) is an nmt::Error naming the tag and how to make one that has it.
  LanguageTags(const DataConfig& data, const Tokenizer& tokenizer);

  bool active() const { return where_ != LangTag::kNone; }
  bool on_source() const { return where_ == LangTag::kSource; }
  bool on_target() const { return where_ == LangTag::kTarget; }
  /// Pieces a side of a pair gets on top of its text (1 for the side the tag goes on, else 0):
  /// data.max_len filters the text at max_len minus this, so a tagged side never exceeds it.
  size_t extra(bool source_side) const { return (source_side ? on_source() : on_target()) ? 1 : 0; }
  /// The id before the source for target `tgt_lang`, or -1 (no tags, or target-side tags).
  int64_t source_tag(const std::string& tgt_lang) const;
  /// The forced first target id for target `tgt_lang`, or -1 (no tags, or source-side tags).
  int64_t target_tag(const std::string& tgt_lang) const;
  /// Puts `tgt_lang`'s tag into a pair encoded for training or teacher forcing.
  void apply(Example& example, const std::string& tgt_lang) const;
  /// Whether `id` is one of the tags (a tag id inside a text is a clash: the text holds "<2xx>").
  bool is_tag(int64_t id) const;
  /// An nmt::Error naming `where` when an encoded text (before apply) of the source or target
  /// side holds a tag: its text has the tag's characters, which the tokenizer reads as the tag.
  /// Only a side whose tokenizer holds the tags is checked (both for a joint vocabulary).
  void check_text(const std::vector<int64_t>& ids, bool source_side,
                  const std::string& where) const;
  /// `ids` without any tag (a decoded output, in which the model may have put one).
  void strip(std::vector<int64_t>& ids) const;

 private:
  int64_t id_of(const std::string& tgt_lang) const;
  LangTag where_ = LangTag::kNone;
  bool joint_ = true;                   ///< one tokenizer for both sides
  std::map<std::string, int64_t> ids_;  ///< target language -> tag id
};

}  // namespace nmt
