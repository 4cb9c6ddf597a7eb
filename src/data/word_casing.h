#pragma once

// What the source side of the training data says about casing, learned when the tokenizer is
// trained and kept in every checkpoint beside it:
// - each word's usual form inside a sentence ("asian" -> "Asian", "mann" -> "Mann"): a
//   truecaser, as Moses' truecase.perl learns one, which gives an ALL CAPS or Title Case
//   sentence back to the model in the casing it was trained on (text/casing.h);
// - the words that begin sentences but are (almost) never written that way inside one ("A",
//   "Two", "Ein", "However"): such a word after a word that ends without punctuation marks a
//   sentence boundary the writer left unpunctuated ("... in the water Two men ...",
//   text/sentences.h split_run_ons).
// Words are whitespace-separated tokens without the punctuation around them (core/words.h).

#include <cstddef>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace nmt {

class WordCasing {
 public:
  /// A word is given a usual form when seen at least this often inside sentences.
  static constexpr size_t kMinInside = 2;
  /// A sentence starter begins at least this many sentences...
  static constexpr size_t kMinStarts = 20;
  /// ... and is written the same way inside sentences at most this share of that often.
  static constexpr double kMaxInsideShare = 0.1;

  WordCasing() = default;

  /// Learns from sentences of language `lang` (a code such as en, de; case mappings are
  /// ICU's for it): the first word of a line, and a word after one that ends in . ! ?, begins a
  /// sentence; every other word is inside one.
  static WordCasing learn(const std::vector<std::string>& sentences, const std::string& lang);

  /// What to_json() wrote; anything else is an nmt::Error naming `where`.
  static WordCasing from_json(const nlohmann::json& json, const std::string& where);
  nlohmann::json to_json() const;
  /// from_json of a file to_json() was written to; an unreadable or foreign file is an
  /// nmt::Error naming it.
  static WordCasing read(const std::filesystem::path& file);

  /// Nothing learned (an older checkpoint, or too little data).
  bool empty() const { return forms_.empty() && starters_.empty(); }
  const std::string& lang() const { return lang_; }

  /// The usual form of `lowered` (a word lower-cased for lang()) inside a sentence, or nullptr
  /// when it is lower case or the data did not show it often enough.
  const std::string* usual_form(const std::string& lowered) const;

  /// Whether `word` begins with a capital that its usual form inside a sentence does not have
  /// (or it has none): part of a name ("Kids Food Basket", "PM"), not a word capitalised as the
  /// training sources write it ("Asian").
  bool capitalised_unusually(const std::string& word) const;

  /// Whether `word`, exactly as written, is a sentence starter.
  bool starts_sentences(const std::string& word) const { return starters_.count(word) > 0; }

  size_t forms() const { return forms_.size(); }
  size_t starters() const { return starters_.size(); }
  /// The starters, sorted (for reports).
  std::vector<std::string> starter_list() const;
  /// One line for logs: "198 usual forms, 42 sentence starters (A An Black ...)".
  std::string summary() const;

 private:
  std::string lang_;
  std::unordered_map<std::string, std::string> forms_;  // lowered -> usual form (not lowered)
  std::unordered_set<std::string> starters_;
};

}  // namespace nmt
