#include "core/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"

namespace nmt {
namespace {

using nlohmann::json;

const char* type_name_of(const json& value) { return value.type_name(); }

bool is_auto(const json& value) { return value.is_string() && value.get<std::string>() == "auto"; }

std::string auto_key_list() {
  std::string list;
  for (const auto& key : auto_sized_keys()) list += (list.empty() ? "" : ", ") + key;
  return list;
}

/// For "auto" given to a key that is not sized automatically: the keys that are.
std::string auto_hint(const json& value) {
  return is_auto(value) ? " (the keys that take \"auto\": " + auto_key_list() + ")" : "";
}

/// A settings group nested in a section (data.augment): a type with its own fields().
template <class T, class = void>
struct IsGroup : std::false_type {};
template <class T>
struct IsGroup<T, std::void_t<decltype(std::declval<T&>().fields(
                      std::declval<void (*)(const char*, double&)>()))>> : std::true_type {};

template <class Section>
void read_section(Section& section, const json& object, const std::string& where);
template <class Section>
json write_section(Section section);

/// Assigns `value` to a typed field, or throws naming `where` and the expected type.
template <class T>
void assign(T& field, const json& value, const std::string& where) {
  if constexpr (std::is_same_v<T, CorpusSpec>) {
    field = corpus_from_json(value, where);
  } else if constexpr (std::is_same_v<T, Warmup>) {
    field = warmup_from_json(value, where);
  } else if constexpr (std::is_same_v<T, std::vector<CorpusSpec>>) {
    field = corpus_list_from_json(value, where);
  } else if constexpr (IsGroup<T>::value) {
    read_section(field, value, where);  // keys not given keep their values
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) {
      throw Error(where + ": expected true or false, got " + type_name_of(value) + " " +
                  value.dump());
    }
    field = value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) {
      throw Error(where + ": expected an integer, got " + type_name_of(value) + " " + value.dump() +
                  auto_hint(value));
    }
    field = value.get<T>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    // A list of strings: a JSON array, or one string of comma-separated items (handy in --set).
    field.clear();
    if (value.is_string()) {
      std::stringstream items(value.get<std::string>());
      for (std::string item; std::getline(items, item, ',');) {
        if (!item.empty()) field.push_back(item);
      }
      return;
    }
    if (!value.is_array()) {
      throw Error(where + ": expected a list of strings, got " + type_name_of(value) + " " +
                  value.dump());
    }
    for (const auto& item : value) {
      if (!item.is_string()) {
        throw Error(where + ": expected a list of strings, got element " + item.dump());
      }
      field.push_back(item.get<std::string>());
    }
  } else if constexpr (std::is_enum_v<T>) {
    if (!value.is_string()) {
      throw Error(where + ": expected one of " + choice_list<T>() + ", got " + type_name_of(value) +
                  " " + value.dump());
    }
    field = require_choice<T>(where + " =", value.get<std::string>());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) {
      throw Error(where + ": expected a number, got " + type_name_of(value) + " " + value.dump() +
                  auto_hint(value));
    }
    field = value.get<T>();
  } else {
    if (!value.is_string()) {
      throw Error(where + ": expected a string, got " + type_name_of(value) + " " + value.dump());
    }
    field = value.get<std::string>();
  }
}

/// Sets `key` in `section` from `value`; false if the section has no such key.
template <class Section>
bool set_field(Section& section, const std::string& key, const json& value,
               const std::string& where) {
  bool found = false;
  section.fields([&](const char* name, auto& field, auto&&...) {
    if (key == name) {
      assign(field, value, where);
      found = true;
    }
  });
  return found;
}

template <class Section>
std::string known_keys(Section section) {
  std::string keys;
  section.fields([&](const char* name, auto&, auto&&...) {
    keys += (keys.empty() ? "" : ", ") + std::string(name);
  });
  return keys;
}

template <class Section>
void read_section(Section& section, const json& object, const std::string& where) {
  if (!object.is_object()) {
    throw Error(where + ": expected an object of settings, got " + type_name_of(object));
  }
  for (const auto& [key, value] : object.items()) {
    if (!set_field(section, key, value, where + "." + key)) {
      throw Error(where + ": unknown key '" + key + "' (known: " + known_keys(section) + ")");
    }
  }
}

template <class Section>
json write_section(Section section) {
  json object = json::object();
  section.fields([&](const char* name, auto& field, auto&&...) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_enum_v<T>) {
      object[name] = choice_name(field);
    } else if constexpr (std::is_same_v<T, CorpusSpec>) {
      object[name] = corpus_to_json(field);
    } else if constexpr (std::is_same_v<T, Warmup>) {
      object[name] = warmup_to_json(field);
    } else if constexpr (std::is_same_v<T, std::vector<CorpusSpec>>) {
      object[name] = corpus_list_to_json(field);
    } else if constexpr (IsGroup<T>::value) {
      object[name] = write_section(field);
    } else {
      object[name] = field;
    }
  });
  return object;
}

/// Calls `f(name, section)` for each section of the config.
template <class C, class F>
void for_each_section(C& config, F&& f) {
  f("model", config.model);
  f("data", config.data);
  f("train", config.train);
  f("decode", config.decode);
}

/// The keys a section still reads under their old names (configs and checkpoints written
/// before data.train/data.valid took corpus lists, and before train.warmup took a share).
std::string canonical_key(const std::string& section, const std::string& key) {
  if (section == "data" && key == "train_split") return "train";
  if (section == "data" && key == "valid_split") return "valid";
  if (section == "train" && key == "warmup_steps") return "warmup";
  return key;
}

/// `object` (one section) with its old key names renamed; an old and a new name together are
/// an error.
json with_current_keys(const std::string& section, const json& object, const std::string& where) {
  if (!object.is_object()) return object;
  json renamed = json::object();
  for (const auto& [key, value] : object.items()) {
    const std::string current = canonical_key(section, key);
    if (current != key && object.contains(current)) {
      throw Error(where + ": both '" + key + "' and its new name '" + current + "': keep one");
    }
    renamed[current] = value;
  }
  return renamed;
}

bool auto_sized(const std::string& key) {
  const auto& keys = auto_sized_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// The "auto" record of a config file: {KEY: {"value": V, "why": TEXT}}.
std::vector<AutoChoice> auto_choices_from_json(const json& record, const std::string& where) {
  if (!record.is_object()) {
    throw Error(where + ": expected an object of {\"value\": ..., \"why\": ...} by key");
  }
  std::vector<AutoChoice> choices;
  for (const auto& [key, entry] : record.items()) {
    if (!entry.is_object() || !entry.contains("value") || !entry.contains("why") ||
        !entry["why"].is_string()) {
      throw Error(where + "." + key + ": expected {\"value\": ..., \"why\": \"...\"}");
    }
    choices.push_back({key, entry["value"].dump(), entry["why"].get<std::string>()});
  }
  return choices;
}

}  // namespace

const std::vector<std::string>& auto_sized_keys() {
  static const std::vector<std::string> keys = {
      "data.vocab_size", "data.normalization",    "data.batch_tokens",    "model.d_model",
      "model.n_heads",   "model.encoder_layers",  "model.decoder_layers", "model.d_ff",
      "model.dropout",   "train.label_smoothing", "train.warmup",         "train.lr"};
  return keys;
}

Warmup warmup_from_json(const json& value, const std::string& where) {
  const std::string valid =
      " (valid: a number of steps such as 800, or a share of the budget "
      "such as \"10%\")";
  Warmup warmup;
  if (value.is_number_integer()) {
    warmup.steps = value.get<int64_t>();
    if (warmup.steps < 0) throw Error(where + " = " + value.dump() + " is negative" + valid);
    return warmup;
  }
  if (value.is_number()) {
    throw Error(where + " = " + value.dump() + " is not a whole number of steps" + valid);
  }
  if (!value.is_string()) {
    throw Error(where + ": expected steps or a share, got " + type_name_of(value) + " " +
                value.dump() + valid);
  }
  std::string text = value.get<std::string>();
  const bool share = !text.empty() && text.back() == '%';
  if (share) text.pop_back();
  size_t used = 0;
  double number = 0.0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const bool whole = !text.empty() && used == text.size() && std::isfinite(number);
  if (share && whole && number >= 0.0 && number < 100.0) {
    warmup.percent = number;
    warmup.steps = 0;
  } else if (!share && whole && number >= 0.0 && number == std::floor(number)) {
    warmup.steps = int64_t(number);
  } else {
    throw Error(where + " = " + value.dump() + " is not valid" + valid +
                (share ? ": a share is at least 0% and below 100%" : ""));
  }
  return warmup;
}

std::string Warmup::text() const {
  const json value = warmup_to_json(*this);
  return value.is_string() ? value.get<std::string>() : value.dump();
}

json warmup_to_json(const Warmup& warmup) {
  if (warmup.percent <= 0.0) return warmup.steps;
  std::ostringstream text;
  text << std::setprecision(12) << warmup.percent << '%';
  return text.str();
}

Config config_from_json(const json& json_config, const std::string& origin) {
  if (!json_config.is_object()) {
    throw Error(origin + ": expected a JSON object with sections model, data, train, decode");
  }
  Config config;
  for (const auto& [key, value] : json_config.items()) {
    if (key == "auto") {
      config.auto_choices = auto_choices_from_json(value, origin + ": auto");
      continue;
    }
    bool found = false;
    for_each_section(config, [&](const char* name, auto& section) {
      if (key != name) return;
      json settings = with_current_keys(name, value, origin + ": " + name);
      if (settings.is_object()) {  // "auto" values are sized later (train/auto_recipe.h)
        for (auto it = settings.begin(); it != settings.end();) {
          const std::string full = std::string(name) + "." + it.key();
          if (is_auto(it.value()) && auto_sized(full)) {
            config.auto_keys.push_back(full);
            it = settings.erase(it);
          } else {
            ++it;
          }
        }
      }
      read_section(section, settings, origin + ": " + name);
      found = true;
    });
    if (!found) {
      throw Error(origin + ": unknown section '" + key +
                  "' (known: model, data, train, decode, and auto, the record of auto sizing)");
    }
  }
  return config;
}

json config_to_json(const Config& config) {
  json object = json::object();
  for_each_section(config, [&](const char* name, const auto& section) {
    object[name] = write_section(section);
  });
  for (const auto& key : config.auto_keys) {
    const auto dot = key.find('.');
    object[key.substr(0, dot)][key.substr(dot + 1)] = "auto";
  }
  if (!config.auto_choices.empty()) {
    json record = json::object();
    for (const auto& choice : config.auto_choices) {
      record[choice.key] = {{"value", json::parse(choice.value)}, {"why", choice.why}};
    }
    object["auto"] = record;
  }
  return object;
}

namespace {

/// A config file's JSON, as it is in the file.
json read_config_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open config file");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path.string() + ": invalid JSON (" + e.what() + ")");
  }
}

/// Lays `layer`'s sections over `into`, key by key: a key in `layer` replaces the same key of
/// the same section (a list, such as data.train, as a whole).
/// A key that `into` has as "auto" and `layer` (from `origin`) gives a value is recorded in
/// `explicit_over_auto`: the explicit value wins, and the run's log says so.
void merge_layer(json& into, const json& layer, const std::string& origin,
                 std::vector<AutoChoice>& explicit_over_auto) {
  static const json defaults = config_to_json(Config{});
  for (const auto& [section, values] : layer.items()) {
    if (values.is_object() && into.contains(section) && into[section].is_object()) {
      for (const auto& [key, value] : values.items()) {
        if (into[section].contains(key) && is_auto(into[section][key]) && !is_auto(value)) {
          explicit_over_auto.push_back(
              {section + "." + key, value.dump(), "given in " + origin + " over \"auto\""});
        }
        // A group of settings (data.augment) merges key by key too; other values (a corpus
        // object among them) replace what the file below had.
        const bool group = defaults.contains(section) && defaults[section].contains(key) &&
                           defaults[section][key].is_object() && value.is_object() &&
                           into[section].contains(key) && into[section][key].is_object();
        if (group) {
          for (const auto& [inner, setting] : value.items()) into[section][key][inner] = setting;
        } else {
          into[section][key] = value;
        }
      }
    } else {
      into[section] = values;
    }
  }
}

/// `path`'s config with its "inherit" files (paths relative to it, a name or a list) laid
/// under it in order, each resolved the same way. `chain` holds the files being read, to name
/// a cycle.
json resolved_config_json(const std::filesystem::path& path,
                          std::vector<std::filesystem::path>& chain,
                          std::vector<AutoChoice>& explicit_over_auto) {
  const auto canonical = std::filesystem::weakly_canonical(path);
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
    std::string cycle;
    for (const auto& file : chain) cycle += file.string() + " -> ";
    throw Error(path.string() + ": \"inherit\" makes a cycle: " + cycle + canonical.string());
  }
  json own = read_config_file(path);
  if (!own.is_object()) {
    throw Error(path.string() + ": expected a JSON object with sections model, data, train, " +
                "decode (and optionally \"inherit\")");
  }
  json merged = json::object();
  if (own.contains("inherit")) {
    const json bases = own["inherit"].is_string() ? json::array({own["inherit"]}) : own["inherit"];
    if (!bases.is_array()) {
      throw Error(path.string() + ": \"inherit\" must be a config file name or a list of them " +
                  "(relative to this file), got " + own["inherit"].dump());
    }
    chain.push_back(canonical);
    for (const auto& base : bases) {
      if (!base.is_string()) {
        throw Error(path.string() + ": \"inherit\" lists " + base.dump() +
                    ": expected a config file name");
      }
      try {
        const auto base_path = path.parent_path() / base.get<std::string>();
        merge_layer(merged, resolved_config_json(base_path, chain, explicit_over_auto),
                    base_path.string(), explicit_over_auto);
      } catch (const Error& e) {
        throw Error(path.string() + ": inherit: " + e.what());
      }
    }
    chain.pop_back();
    own.erase("inherit");
  }
  merge_layer(merged, own, path.string(), explicit_over_auto);
  return merged;
}

}  // namespace

Config load_config(const std::filesystem::path& path) { return load_configs({path}); }

Config load_configs(const std::vector<std::filesystem::path>& paths) {
  json merged = json::object();
  std::string origin;
  std::vector<AutoChoice> explicit_over_auto;
  for (const auto& path : paths) {
    std::vector<std::filesystem::path> chain;
    merge_layer(merged, resolved_config_json(path, chain, explicit_over_auto), path.string(),
                explicit_over_auto);
    origin += (origin.empty() ? "" : " + ") + path.string();
  }
  Config config = config_from_json(merged, origin);
  for (size_t i = 0; i < explicit_over_auto.size(); ++i) {
    AutoChoice choice = explicit_over_auto[i];
    // The last word counts: a key set to "auto" again by a later layer stays auto, and of two
    // explicit values over "auto" the later one is recorded, with the value in force.
    const auto later =
        std::find_if(explicit_over_auto.begin() + std::ptrdiff_t(i) + 1, explicit_over_auto.end(),
                     [&](const AutoChoice& other) { return other.key == choice.key; });
    if (later != explicit_over_auto.end() ||
        std::find(config.auto_keys.begin(), config.auto_keys.end(), choice.key) !=
            config.auto_keys.end()) {
      continue;
    }
    const auto dot = choice.key.find('.');
    choice.value = merged[choice.key.substr(0, dot)][choice.key.substr(dot + 1)].dump();
    config.auto_choices.push_back(choice);
  }
  try {
    config.validate();
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  return config;
}

void save_config(const Config& config, const std::filesystem::path& path) {
  // Durably: a run's config.json is rewritten at every (re)start, and a kill mid-write must not
  // leave a run that cannot be resumed.
  write_file_atomically(path, config_to_json(config).dump(2) + "\n", "config file");
}

bool DecodeConfig::operator==(const DecodeConfig& other) const {
  // Every field fields() lists, as the config file writes them: a new field cannot be left out.
  return write_section(*this) == write_section(other);
}

std::string first_difference(const Config& a, const Config& b, const std::string& section) {
  const json left = config_to_json(a).at(section), right = config_to_json(b).at(section);
  for (const auto& [key, value] : left.items()) {
    if (right.at(key) != value) {
      return section + "." + key + " = " + value.dump() + " vs " + right.at(key).dump();
    }
  }
  return "";
}

void apply_override(Config& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq) {
    throw Error("--set '" + assignment + "': expected section.key=value, e.g. train.lr=3e-4");
  }
  const std::string section = assignment.substr(0, dot);
  const std::string key = canonical_key(section, assignment.substr(dot + 1, eq - dot - 1));
  const std::string text = assignment.substr(eq + 1);
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // bare strings need no quotes: train.device=cpu
  json patch = config_to_json(config);
  if (!patch.contains(section) || section == "auto") {
    throw Error("--set '" + assignment + "': unknown section '" + section +
                "' (known: model, data, train, decode)");
  }
  // An object or a list stays JSON (data.train=[{"src": "a.ja", "tgt": "a.en"}]); other values
  // of string and list keys are text: train.name=123, train.monitor_splits=a,b.
  const bool structured = value.is_object() || value.is_array();
  // A key of a nested group: data.augment.upper=0.1.
  json* parent = &patch[section];
  std::string leaf = key;
  if (const auto inner = key.find('.'); inner != std::string::npos) {
    const std::string group = key.substr(0, inner);
    if (!parent->contains(group) || !(*parent)[group].is_object()) {
      throw Error("--set '" + assignment + "': " + section + "." + group +
                  " is not a group of settings");
    }
    parent = &(*parent)[group];
    leaf = key.substr(inner + 1);
  }
  // A key still "auto" is not a string key: its value is parsed (data.vocab_size=8000).
  const bool sized_later = auto_sized(section + "." + key);
  if (parent->contains(leaf) && !structured && !sized_later &&
      ((*parent)[leaf].is_string() || (*parent)[leaf].is_array())) {
    value = text;
  }
  (*parent)[leaf] = value;
  const std::vector<std::string> was_auto = config.auto_keys;
  config = config_from_json(patch, "--set " + assignment);
  const std::string full = section + "." + key;
  if (std::find(was_auto.begin(), was_auto.end(), full) != was_auto.end() && !is_auto(value)) {
    config.auto_choices.push_back({full, (*parent)[leaf].dump(), "given by --set over \"auto\""});
  }
}

void apply_overrides(Config& config, const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) apply_override(config, assignment);
  config.validate();
}

}  // namespace nmt
