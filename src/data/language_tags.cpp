#include "data/language_tags.h"

#include <algorithm>

#include "core/error.h"

namespace nmt {

LanguageTags::LanguageTags(const DataConfig& data, const Tokenizer& tokenizer)
    : where_(data.lang_tag), joint_(tokenizer.joint()) {
  if (where_ == LangTag::kNone) return;
  for (const auto& lang : target_languages(data)) {
    const std::string tag = language_tag(lang);
    const int64_t id =
        where_ == LangTag::kSource ? tokenizer.src_piece_id(tag) : tokenizer.tgt_piece_id(tag);
    if (id < 0) {
      throw Error(std::string("data.lang_tag = ") + choice_name(where_) + ": the " +
                  (where_ == LangTag::kSource ? "source" : "target") + " tokenizer has no piece '" +
                  tag +
                  "' (a reused data.spm_model must have every tag as a user-defined symbol: "
                  "spm_train --user_defined_symbols=" +
                  tag + ",...; or let nmt train it)");
    }
    ids_[lang] = id;
  }
}

int64_t LanguageTags::id_of(const std::string& tgt_lang) const {
  const auto it = ids_.find(tgt_lang);
  if (it == ids_.end()) throw Error("no language tag for target language '" + tgt_lang + "'");
  return it->second;
}

int64_t LanguageTags::source_tag(const std::string& tgt_lang) const {
  return where_ == LangTag::kSource ? id_of(tgt_lang) : -1;
}

int64_t LanguageTags::target_tag(const std::string& tgt_lang) const {
  return where_ == LangTag::kTarget ? id_of(tgt_lang) : -1;
}

void LanguageTags::apply(Example& example, const std::string& tgt_lang) const {
  if (where_ == LangTag::kNone) return;
  auto& side = where_ == LangTag::kSource ? example.src : example.tgt;
  side.insert(side.begin(), id_of(tgt_lang));
}

bool LanguageTags::is_tag(int64_t id) const {
  return std::any_of(ids_.begin(), ids_.end(), [&](const auto& item) { return item.second == id; });
}

void LanguageTags::check_text(const std::vector<int64_t>& ids, bool source_side,
                              const std::string& where) const {
  // Separate vocabularies: the other side's ids are another model's (its id 4 is no tag).
  if (ids_.empty() || (!joint_ && extra(source_side) == 0)) return;
  for (const auto& [lang, id] : ids_) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      throw Error(where + " holds the text '" + language_tag(lang) +
                  "', which is the language tag of '" + lang +
                  "' in this model's tokenizer: remove it from the data (or use other "
                  "language codes)");
    }
  }
}

}  // namespace nmt

namespace nmt {

void LanguageTags::strip(std::vector<int64_t>& ids) const {
  // Output ids are the target tokenizer's: tags only when it holds them.
  if (ids_.empty() || (!joint_ && !on_target())) return;
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int64_t id) { return is_tag(id); }),
            ids.end());
}

}  // namespace nmt
