#include "core/config.h"

#include <fstream>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"

namespace nmt {
namespace {

using nlohmann::json;

const char* type_name_of(const json& value) { return value.type_name(); }

/// Assigns `value` to a typed field, or throws naming `where` and the expected type.
template <class T>
void assign(T& field, const json& value, const std::string& where) {
  if constexpr (std::is_same_v<T, CorpusSpec>) {
    field = corpus_from_json(value, where);
  } else if constexpr (std::is_same_v<T, std::vector<CorpusSpec>>) {
    field = corpus_list_from_json(value, where);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) {
      throw Error(where + ": expected true or false, got " + type_name_of(value) + " " +
                  value.dump());
    }
    field = value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) {
      throw Error(where + ": expected an integer, got " + type_name_of(value) + " " + value.dump());
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
      throw Error(where + ": expected a number, got " + type_name_of(value) + " " + value.dump());
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
  section.fields([&](const char* name, auto& field) {
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
  section.fields(
      [&](const char* name, auto&) { keys += (keys.empty() ? "" : ", ") + std::string(name); });
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
  section.fields([&](const char* name, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_enum_v<T>) {
      object[name] = choice_name(field);
    } else if constexpr (std::is_same_v<T, CorpusSpec>) {
      object[name] = corpus_to_json(field);
    } else if constexpr (std::is_same_v<T, std::vector<CorpusSpec>>) {
      object[name] = corpus_list_to_json(field);
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

void check_min(const char* key, double value, double min) {
  if (value < min) {
    std::ostringstream s;
    s << key << " = " << value << " is out of range: must be >= " << min;
    throw Error(s.str());
  }
}

void check_range(const char* key, double value, double min, double max) {
  if (value < min || value > max) {
    std::ostringstream s;
    s << key << " = " << value << " is out of range: must be in [" << min << ", " << max << "]";
    throw Error(s.str());
  }
}

/// The keys a section still reads under their old names (configs and checkpoints written
/// before data.train/data.valid took corpus lists).
std::string canonical_key(const std::string& section, const std::string& key) {
  if (section == "data" && key == "train_split") return "train";
  if (section == "data" && key == "valid_split") return "valid";
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

/// Language codes only name files, so any short file-name-safe code will do.
void check_language(const char* key, const std::string& code) {
  const bool valid =
      !code.empty() && code.size() <= 32 &&
      code.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") ==
          std::string::npos;
  if (!valid) {
    throw Error(std::string(key) + " = '" + code +
                "' is not a valid language code: use 1-32 characters from [A-Za-z0-9_-], "
                "e.g. en, pt-BR, ja");
  }
}

/// data.spm_model / spm_model_tgt agree with data.joint_vocab.
void check_spm_models(const DataConfig& data) {
  if (!data.spm_model_tgt.empty() && data.spm_model.empty()) {
    throw Error("data.spm_model_tgt = '" + data.spm_model_tgt +
                "' needs data.spm_model (the source side's model) too");
  }
  if (data.spm_model.empty()) return;
  if (data.joint_vocab && !data.spm_model_tgt.empty()) {
    throw Error("data.spm_model_tgt = '" + data.spm_model_tgt +
                "' gives the target side its own model: set data.joint_vocab = false too");
  }
  if (!data.joint_vocab && data.spm_model_tgt.empty()) {
    throw Error("data.joint_vocab = false with data.spm_model = '" + data.spm_model +
                "': give the target side's model as data.spm_model_tgt (or set "
                "data.joint_vocab = true to use one model for both)");
  }
}

}  // namespace

void ModelConfig::validate() const {
  check_min("model.d_model", d_model, 1);
  check_min("model.n_heads", n_heads, 1);
  if (d_model % n_heads != 0) {
    throw Error("model.d_model = " + std::to_string(d_model) +
                " is not divisible by model.n_heads = " + std::to_string(n_heads) +
                ": choose n_heads that divides d_model");
  }
  check_min("model.encoder_layers", encoder_layers, 1);
  check_min("model.decoder_layers", decoder_layers, 1);
  check_min("model.d_ff", d_ff, 1);
  check_range("model.dropout", dropout, 0.0, 0.99);
  check_range("model.attention_dropout", attention_dropout, 0.0, 0.99);
  check_range("model.word_dropout", word_dropout, 0.0, 0.99);
  check_min("model.max_len", max_len, 2);
  check_min("model.src_vocab_size", src_vocab_size, 0);
  check_min("model.tgt_vocab_size", tgt_vocab_size, 0);
  if (share_embeddings && src_vocab_size != tgt_vocab_size) {
    throw Error("model.share_embeddings = true needs equal vocabularies, got src_vocab_size = " +
                std::to_string(src_vocab_size) + " and tgt_vocab_size = " +
                std::to_string(tgt_vocab_size) + " (use data.joint_vocab = true)");
  }
}

void DataConfig::validate() const {
  check_language("data.src_lang", src_lang);
  check_language("data.tgt_lang", tgt_lang);
  if (src_lang == tgt_lang) {
    throw Error("data.src_lang and data.tgt_lang are both '" + src_lang +
                "': the two sides need different codes (they name the files)");
  }
  if (train.empty()) throw Error("data.train is empty: name at least one training corpus");
  for (size_t i = 0; i < train.size(); ++i)
    train[i].validate("data.train[" + std::to_string(i) + "]");
  valid.validate("data.valid");
  if (valid.weight != 1.0) throw Error("data.valid: a weight applies to data.train corpora only");
  check_spm_models(*this);
  check_range("data.vocab_size", vocab_size, 16, 1000000);
  check_range("data.character_coverage", character_coverage, 0.9, 1.0);
  check_min("data.max_len", max_len, 1);
  check_min("data.batch_tokens", batch_tokens, 1);
  check_min("data.pool_batches", pool_batches, 1);
  check_min("data.seed", seed, 0);
  check_range("data.subword_alpha", subword_alpha, 0.0, 1.0);
  if (subword_nbest != -1 && (subword_nbest < 2 || subword_nbest > 512)) {
    throw Error("data.subword_nbest = " + std::to_string(subword_nbest) +
                " is not valid: use -1 (sample from all segmentations) or 2..512");
  }
}

void TrainConfig::validate() const {
  if (name.empty()) throw Error("train.name is empty: give the run a name");
  if (name.size() > 255) {  // it names a directory: longer names fail deep in the file system
    throw Error("train.name is " + std::to_string(name.size()) +
                " characters long: a run directory's name has at most 255");
  }
  check_min("train.seed", seed, 0);
  if (device != "auto" && device != "cpu" && device.rfind("cuda", 0) != 0) {
    throw Error("train.device = '" + device + "' is not valid: use auto, cpu, cuda or cuda:N");
  }
  check_range("train.threads", threads, 0, 1024);
  check_range("train.cpu_workers", cpu_workers, 0, 256);
  check_range("train.lr", lr, 1e-9, 10.0);
  check_range("train.adam_beta1", adam_beta1, 0.0, 0.999999);
  check_range("train.adam_beta2", adam_beta2, 0.0, 0.999999);
  check_range("train.adam_eps", adam_eps, 0.0, 1.0);
  check_min("train.weight_decay", weight_decay, 0.0);
  check_min("train.warmup_steps", warmup_steps, 0);
  check_range("train.label_smoothing", label_smoothing, 0.0, 0.99);
  check_range("train.rdrop_alpha", rdrop_alpha, 0.0, 1000.0);
  check_min("train.clip_norm", clip_norm, 0.0);
  check_min("train.accum_steps", accum_steps, 1);
  check_min("train.max_epochs", max_epochs, 0);
  check_min("train.max_steps", max_steps, 0);
  check_min("train.max_minutes", max_minutes, 0.0);
  if (max_epochs == 0 && max_steps == 0 && max_minutes == 0.0) {
    throw Error("train.max_epochs, train.max_steps and train.max_minutes are all 0: set a limit");
  }
  check_min("train.log_every", log_every, 1);
  check_min("train.validate_every", validate_every, 0);
  check_min("train.valid_max_len_offset", valid_max_len_offset, 1);
  if (metric == Metric::kBleu && !valid_bleu) {
    throw Error("train.metric = 'bleu' needs train.valid_bleu = true (or use train.metric = loss)");
  }
  check_min("train.patience", patience, 0);
  check_min("train.keep_checkpoints", keep_checkpoints, 0);
  for (const auto& corpus : monitor_splits) {
    corpus.validate("train.monitor_splits");
    if (corpus.weight != 1.0) {
      throw Error("train.monitor_splits: a weight applies to data.train corpora only");
    }
  }
}

std::filesystem::path TrainConfig::resolved_run_dir() const {
  return run_dir.empty() ? std::filesystem::path("checkpoints") / name
                         : std::filesystem::path(run_dir);
}

void DecodeConfig::validate() const {
  check_range("decode.beam", beam, 1, 1000);
  check_range("decode.sample", sample, 0, 4096);
  check_range("decode.epsilon", epsilon, 0.0, 0.5);
  check_range("decode.nbest", nbest, 1, candidates());
  check_range("decode.length_penalty", length_penalty, 0.0, 10.0);
  check_min("decode.max_len_offset", max_len_offset, 1);
  check_min("decode.batch_tokens", batch_tokens, 1);
  if (mbr != 0 && (mbr < 2 || mbr < nbest || mbr > candidates())) {
    const std::string limit = sample > 0 ? "decode.sample = " + std::to_string(sample)
                                         : "decode.beam = " + std::to_string(beam);
    throw Error("decode.mbr = " + std::to_string(mbr) + " is not valid: use 0 (off) or a number " +
                "of candidates from max(2, decode.nbest = " + std::to_string(nbest) + ") to " +
                limit);
  }
}

DecodeConfig DecodeConfig::plain_search(int64_t beam_size) const {
  DecodeConfig plain = *this;
  plain.beam = beam_size;
  plain.nbest = 1;
  plain.mbr = 0;
  plain.sample = 0;
  return plain;
}

void Config::validate() const {
  model.validate();
  data.validate();
  train.validate();
  decode.validate();
}

Config config_from_json(const json& json_config, const std::string& origin) {
  if (!json_config.is_object()) {
    throw Error(origin + ": expected a JSON object with sections model, data, train, decode");
  }
  Config config;
  for (const auto& [key, value] : json_config.items()) {
    bool found = false;
    for_each_section(config, [&](const char* name, auto& section) {
      if (key == name) {
        read_section(section, with_current_keys(name, value, origin + ": " + name),
                     origin + ": " + name);
        found = true;
      }
    });
    if (!found) {
      throw Error(origin + ": unknown section '" + key + "' (known: model, data, train, decode)");
    }
  }
  return config;
}

json config_to_json(const Config& config) {
  json object = json::object();
  for_each_section(config, [&](const char* name, const auto& section) {
    object[name] = write_section(section);
  });
  return object;
}

Config load_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open config file");
  json parsed;
  try {
    parsed = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path.string() + ": invalid JSON (" + e.what() + ")");
  }
  Config config = config_from_json(parsed, path.string());
  try {
    config.validate();
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  return config;
}

void save_config(const Config& config, const std::filesystem::path& path) {
  // Durably: a run's config.json is rewritten at every (re)start, and a kill mid-write must not
  // leave a run that cannot be resumed.
  write_file_atomically(path, config_to_json(config).dump(2) + "\n", "config file");
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
  if (!patch.contains(section)) {
    throw Error("--set '" + assignment + "': unknown section '" + section +
                "' (known: model, data, train, decode)");
  }
  // An object or a list stays JSON (data.train=[{"src": "a.ja", "tgt": "a.en"}]); other values
  // of string and list keys are text: train.name=123, train.monitor_splits=a,b.
  const bool structured = value.is_object() || value.is_array();
  if (patch[section].contains(key) && !structured &&
      (patch[section][key].is_string() || patch[section][key].is_array())) {
    value = text;
  }
  patch[section][key] = value;
  config = config_from_json(patch, "--set " + assignment);
}

void apply_overrides(Config& config, const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) apply_override(config, assignment);
  config.validate();
}

}  // namespace nmt
