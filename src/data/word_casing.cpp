#include "data/word_casing.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>

#include "core/case_mapping.h"
#include "core/error.h"
#include "core/words.h"

namespace nmt {
namespace {

/// Whether the punctuation after a token's core ends a sentence (". ! ? …").
bool ends_sentence(const std::string& tail) {
  return tail.find_first_of(".!?") != std::string::npos || tail.find("\u2026") != std::string::npos;
}

bool starts_upper(const std::string& word) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(word.data());
  int32_t i = 0;
  UChar32 c = 0;
  U8_NEXT(bytes, i, static_cast<int32_t>(word.size()), c);
  return c >= 0 && (u_isUUppercase(c) || u_istitle(c));
}

}  // namespace

WordCasing WordCasing::learn(const std::vector<std::string>& sentences, const std::string& lang) {
  std::unordered_map<std::string, std::map<std::string, size_t>> inside;  // lowered -> forms
  std::unordered_map<std::string, size_t> starts, inside_exact;
  for (const auto& sentence : sentences) {
    bool initial = true;
    for (const auto& token : text_words(sentence, {0, sentence.size()})) {
      const auto core = word_core(sentence, token);
      const bool next_initial = ends_sentence(sentence.substr(core.end, token.end - core.end));
      if (!core.empty()) {
        std::string word = sentence.substr(core.begin, core.size());
        if (initial) {
          ++starts[word];
        } else {
          ++inside_exact[word];
          ++inside[lower_case(word, lang)][std::move(word)];
        }
      }
      initial = next_initial;
    }
  }
  WordCasing out;
  out.lang_ = lang;
  for (auto& [lowered, forms] : inside) {
    size_t total = 0;
    const std::string* best = &lowered;
    size_t best_count = forms.count(lowered) ? forms[lowered] : 0;
    for (const auto& [form, count] : forms) {
      total += count;
      if (count > best_count) best = &form, best_count = count;
    }
    if (total >= kMinInside && *best != lowered) out.forms_.emplace(lowered, *best);
  }
  for (const auto& [word, count] : starts) {
    if (count < kMinStarts || !starts_upper(word)) continue;
    const auto it = inside_exact.find(word);
    const size_t within = it == inside_exact.end() ? 0 : it->second;
    if (static_cast<double>(within) <= kMaxInsideShare * static_cast<double>(count)) {
      out.starters_.insert(word);
    }
  }
  return out;
}

const std::string* WordCasing::usual_form(const std::string& lowered) const {
  const auto it = forms_.find(lowered);
  return it == forms_.end() ? nullptr : &it->second;
}

bool WordCasing::capitalised_unusually(const std::string& word) const {
  if (!starts_upper(word)) return false;
  const auto* form = usual_form(lower_case(word, lang_));
  return form == nullptr || *form != word;
}

std::vector<std::string> WordCasing::starter_list() const {
  std::vector<std::string> out(starters_.begin(), starters_.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::string WordCasing::summary() const {
  std::string starters;
  for (const auto& word : starter_list()) starters += (starters.empty() ? "" : " ") + word;
  return std::to_string(forms()) + " usual forms, " + std::to_string(this->starters()) +
         " sentence starters (" + starters + ")";
}

nlohmann::json WordCasing::to_json() const {
  std::map<std::string, std::string> forms(forms_.begin(), forms_.end());  // sorted: stable files
  return {{"lang", lang_}, {"forms", forms}, {"starters", starter_list()}};
}

WordCasing WordCasing::from_json(const nlohmann::json& json, const std::string& where) {
  WordCasing out;
  try {
    out.lang_ = json.at("lang").get<std::string>();
    for (const auto& [lowered, form] : json.at("forms").items()) {
      out.forms_.emplace(lowered, form.get<std::string>());
    }
    for (const auto& word : json.at("starters")) out.starters_.insert(word.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not a word casing record (" + e.what() +
                "); expected {\"lang\": ..., \"forms\": {...}, \"starters\": [...]}");
  }
  return out;
}

WordCasing WordCasing::read(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot read the word casing file");
  const auto parsed = nlohmann::json::parse(in, nullptr, false);
  if (parsed.is_discarded()) throw Error(file.string() + ": not JSON (delete it to relearn it)");
  return from_json(parsed, file.string());
}

}  // namespace nmt
