#include "core/corpus_spec.h"

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nmt {
namespace {

using nlohmann::json;

std::string string_of(const json& object, const char* key, const std::string& where) {
  const json& value = object.at(key);
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw Error(where + "." + key + ": expected a non-empty path string, got " + value.dump());
  }
  return value.get<std::string>();
}

int64_t column_of(const json& object, const char* key, int64_t fallback, const std::string& where) {
  if (!object.contains(key)) return fallback;
  if (!object.at(key).is_number_integer()) {
    throw Error(where + "." + key + ": expected an integer column (0-based), got " +
                object.at(key).dump());
  }
  return object.at(key).get<int64_t>();
}

/// Which kind an object names, by its one path key; several or none is an error.
CorpusKind kind_of(const json& object, const std::string& where) {
  const int kinds =
      int(object.contains("split")) + int(object.contains("src")) + int(object.contains("tsv"));
  if (kinds != 1 || object.contains("src") != object.contains("tgt")) {
    throw Error(where + ": " + object.dump() +
                " is not a corpus: give {\"split\": NAME}, {\"src\": PATH, \"tgt\": PATH} or "
                "{\"tsv\": PATH, \"src_column\": 0, \"tgt_column\": 1} (optionally with "
                "\"weight\", \"src_lang\", \"tgt_lang\")");
  }
  if (object.contains("split")) return CorpusKind::kSplit;
  return object.contains("src") ? CorpusKind::kFiles : CorpusKind::kTsv;
}

void check_keys(const json& object, CorpusKind kind, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    const bool known =
        key == "weight" || key == "src_lang" || key == "tgt_lang" ||
        (kind == CorpusKind::kSplit && key == "split") ||
        (kind == CorpusKind::kFiles && (key == "src" || key == "tgt")) ||
        (kind == CorpusKind::kTsv && (key == "tsv" || key == "src_column" || key == "tgt_column"));
    if (!known) throw Error(where + ": unknown key '" + key + "' in corpus " + object.dump());
  }
}

CorpusSpec from_object(const json& object, const std::string& where) {
  CorpusSpec spec;
  spec.kind = kind_of(object, where);
  check_keys(object, spec.kind, where);
  if (spec.kind == CorpusKind::kSplit) spec.split = string_of(object, "split", where);
  if (spec.kind == CorpusKind::kFiles) {
    spec.src = string_of(object, "src", where);
    spec.tgt = string_of(object, "tgt", where);
  }
  if (spec.kind == CorpusKind::kTsv) {
    spec.tsv = string_of(object, "tsv", where);
    spec.src_column = column_of(object, "src_column", 0, where);
    spec.tgt_column = column_of(object, "tgt_column", 1, where);
  }
  if (object.contains("weight")) {
    if (!object.at("weight").is_number()) {
      throw Error(where + ".weight: expected a number, got " + object.at("weight").dump());
    }
    spec.weight = object.at("weight").get<double>();
  }
  for (const auto& [key, field] : {std::pair<const char*, std::string*>{"src_lang", &spec.src_lang},
                                   {"tgt_lang", &spec.tgt_lang}}) {
    if (!object.contains(key)) continue;
    if (!object.at(key).is_string()) {
      throw Error(where + "." + key + ": expected a language code string, got " +
                  object.at(key).dump());
    }
    *field = object.at(key).get<std::string>();
  }
  return spec;
}

/// "corpus.ja.gz" -> "corpus".
std::string stem_of(const std::string& path) {
  std::filesystem::path p(path);
  if (p.extension() == ".gz") p = p.stem();
  return p.stem().string();
}

}  // namespace

CorpusSpec CorpusSpec::of_split(const std::string& name) {
  CorpusSpec spec;
  spec.split = name;
  return spec;
}

std::string CorpusSpec::name() const {
  switch (kind) {
    case CorpusKind::kSplit:
      return split;
    case CorpusKind::kFiles:
      return stem_of(src);
    case CorpusKind::kTsv:
      return stem_of(tsv);
  }
  return split;
}

std::string CorpusSpec::describe() const {
  if (!src_lang.empty() || !tgt_lang.empty()) {
    CorpusSpec plain = *this;
    plain.src_lang.clear();
    plain.tgt_lang.clear();
    return plain.describe() + " (" + (src_lang.empty() ? "data.src_lang" : src_lang) + "->" +
           (tgt_lang.empty() ? "data.tgt_lang" : tgt_lang) + ")";
  }
  switch (kind) {
    case CorpusKind::kSplit:
      return "split '" + split + "'";
    case CorpusKind::kFiles:
      return "files '" + src + "', '" + tgt + "'";
    case CorpusKind::kTsv:
      return "tsv '" + tsv + "' (columns " + std::to_string(src_column) + ", " +
             std::to_string(tgt_column) + ")";
  }
  return split;
}

void CorpusSpec::validate(const std::string& key) const {
  if (kind == CorpusKind::kSplit && (split.empty() || split.find('/') != std::string::npos)) {
    throw Error(key + ": '" + split +
                "' is not a split name (a file stem in data.dir, e.g. test_2016_flickr); for "
                "files elsewhere give {\"src\": PATH, \"tgt\": PATH}");
  }
  if (kind == CorpusKind::kTsv) {
    if (src_column < 0 || tgt_column < 0 || src_column == tgt_column) {
      throw Error(key + ": tsv columns src_column = " + std::to_string(src_column) +
                  ", tgt_column = " + std::to_string(tgt_column) +
                  " are not valid: two different 0-based columns");
    }
  }
  if (!(weight > 0.0 && weight <= 1000.0)) {
    std::ostringstream s;
    s << key << ": weight = " << weight << " is out of range: must be in (0, 1000]";
    throw Error(s.str());
  }
}

bool CorpusSpec::operator==(const CorpusSpec& other) const {
  return kind == other.kind && split == other.split && src == other.src && tgt == other.tgt &&
         tsv == other.tsv && src_column == other.src_column && tgt_column == other.tgt_column &&
         weight == other.weight && src_lang == other.src_lang && tgt_lang == other.tgt_lang;
}

CorpusSpec corpus_from_json(const json& value, const std::string& where) {
  if (value.is_string()) return CorpusSpec::of_split(value.get<std::string>());
  if (value.is_object()) return from_object(value, where);
  throw Error(where + ": expected a split name or a corpus object, got " + value.type_name() + " " +
              value.dump());
}

json corpus_to_json(const CorpusSpec& spec) {
  json object;
  switch (spec.kind) {
    case CorpusKind::kSplit:
      if (spec.weight == 1.0 && spec.src_lang.empty() && spec.tgt_lang.empty()) return spec.split;
      object = {{"split", spec.split}};
      break;
    case CorpusKind::kFiles:
      object = {{"src", spec.src}, {"tgt", spec.tgt}};
      break;
    case CorpusKind::kTsv:
      object = {
          {"tsv", spec.tsv}, {"src_column", spec.src_column}, {"tgt_column", spec.tgt_column}};
      break;
  }
  if (spec.weight != 1.0) object["weight"] = spec.weight;
  if (!spec.src_lang.empty()) object["src_lang"] = spec.src_lang;
  if (!spec.tgt_lang.empty()) object["tgt_lang"] = spec.tgt_lang;
  return object;
}

std::vector<CorpusSpec> corpus_list_from_json(const json& value, const std::string& where) {
  std::vector<CorpusSpec> specs;
  if (value.is_string()) {
    std::stringstream items(value.get<std::string>());
    for (std::string item; std::getline(items, item, ',');) {
      if (!item.empty()) specs.push_back(CorpusSpec::of_split(item));
    }
  } else if (value.is_object()) {
    specs.push_back(from_object(value, where));
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      specs.push_back(corpus_from_json(value[i], where + "[" + std::to_string(i) + "]"));
    }
  } else {
    throw Error(where + ": expected a corpus or a list of corpora, got " + value.type_name() + " " +
                value.dump());
  }
  return specs;
}

json corpus_list_to_json(const std::vector<CorpusSpec>& specs) {
  json list = json::array();
  for (const auto& spec : specs) list.push_back(corpus_to_json(spec));
  return list;
}

std::vector<CorpusSpec> corpus_list_from_text(const std::string& text, const std::string& where) {
  const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && (parsed.is_object() || parsed.is_array())) {
    return corpus_list_from_json(parsed, where);
  }
  return corpus_list_from_json(json(text), where);
}

}  // namespace nmt
