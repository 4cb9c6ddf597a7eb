#include "core/languages.h"

#include <algorithm>

#include "core/error.h"

namespace nmt {

LanguagePair corpus_pair(const DataConfig& data, const CorpusSpec& corpus) {
  return {corpus.src_lang.empty() ? data.src_lang : corpus.src_lang,
          corpus.tgt_lang.empty() ? data.tgt_lang : corpus.tgt_lang};
}

std::vector<LanguagePair> trained_pairs(const DataConfig& data) {
  std::vector<LanguagePair> pairs;
  for (const auto& corpus : data.train) {
    const LanguagePair pair = corpus_pair(data, corpus);
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
  }
  return pairs;
}

std::vector<std::string> target_languages(const DataConfig& data) {
  std::vector<std::string> targets;
  for (const auto& pair : trained_pairs(data)) {
    if (std::find(targets.begin(), targets.end(), pair.tgt) == targets.end()) {
      targets.push_back(pair.tgt);
    }
  }
  return targets;
}

bool multilingual(const DataConfig& data) { return trained_pairs(data).size() > 1; }

std::string language_tag(const std::string& lang) { return "<2" + lang + ">"; }

std::vector<std::string> tag_pieces(const DataConfig& data) {
  std::vector<std::string> pieces;
  if (data.lang_tag == LangTag::kNone) return pieces;
  for (const auto& lang : target_languages(data)) pieces.push_back(language_tag(lang));
  return pieces;
}

std::vector<CorpusSpec> corpora_per_pair(const DataConfig& data,
                                         const std::vector<CorpusSpec>& corpora) {
  const auto pairs = trained_pairs(data);
  std::vector<CorpusSpec> out;
  for (const auto& corpus : corpora) {
    const bool own = !corpus.src_lang.empty() || !corpus.tgt_lang.empty();
    if (own || pairs.size() == 1 || corpus.kind != CorpusKind::kSplit) {
      out.push_back(corpus);
      continue;
    }
    for (const auto& pair : pairs) {
      CorpusSpec copy = corpus;
      copy.src_lang = pair.src;
      copy.tgt_lang = pair.tgt;
      out.push_back(copy);
    }
  }
  return out;
}

std::string describe_pairs(const std::vector<LanguagePair>& pairs) {
  std::string text;
  for (const auto& pair : pairs) text += (text.empty() ? "" : ", ") + pair.name();
  return text;
}

void check_languages(const DataConfig& data) {
  const auto pairs = trained_pairs(data);
  for (const auto* list : {&data.train, &data.valid}) {
    const std::string key = list == &data.train ? "data.train" : "data.valid";
    for (size_t i = 0; i < list->size(); ++i) {
      const LanguagePair pair = corpus_pair(data, (*list)[i]);
      if (pair.src == pair.tgt) {
        throw Error(key + "[" + std::to_string(i) + "]: " + (*list)[i].describe() +
                    " translates '" + pair.src +
                    "' into itself: give it src_lang and "
                    "tgt_lang that differ");
      }
    }
  }
  const auto targets = target_languages(data);
  if (targets.size() > 1 && data.lang_tag == LangTag::kNone) {
    throw Error("data.lang_tag = none, but data.train has " + std::to_string(targets.size()) +
                " target languages (" + describe_pairs(pairs) +
                "): set data.lang_tag = source (a <2xx> token before the source) or target (a "
                "forced first target token) so the model knows which one to produce");
  }
  const auto valid = corpora_per_pair(data, data.valid);
  for (const auto& corpus : valid) {
    const LanguagePair pair = corpus_pair(data, corpus);
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) {
      throw Error("data.valid: " + corpus.describe() + " is " + pair.name() +
                  ", a pair data.train does not train (it trains " + describe_pairs(pairs) + ")");
    }
  }
  for (const auto& pair : pairs) {
    const bool validated = std::any_of(valid.begin(), valid.end(), [&](const CorpusSpec& c) {
      return corpus_pair(data, c) == pair;
    });
    if (!validated) {
      throw Error("data.valid has no validation corpus for the pair " + pair.name() +
                  " that data.train trains: add one, e.g. {\"split\": \"val\", \"src_lang\": \"" +
                  pair.src + "\", \"tgt_lang\": \"" + pair.tgt + "\"}");
    }
  }
}

LanguagePair resolve_pair(const DataConfig& data, const std::string& tgt_lang,
                          const std::string& what) {
  const auto pairs = trained_pairs(data);
  if (tgt_lang.empty()) {
    if (target_languages(data).size() == 1) return pairs.front();
    throw Error("the model translates " + describe_pairs(pairs) + ": choose the target with " +
                what);
  }
  for (const auto& pair : pairs) {
    if (pair.tgt == tgt_lang) return pair;
  }
  throw Error(what + " = '" + tgt_lang + "': the model was not trained to translate into '" +
              tgt_lang + "'; its pairs are " + describe_pairs(pairs));
}

}  // namespace nmt
