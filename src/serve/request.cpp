#include "serve/request.h"

#include <cstdint>
#include <limits>
#include <string>

#include "data/corpus.h"

namespace nmt {
namespace {

using json = nlohmann::json;

/// The fields a request may hold: "text", the decode keys declared settable by a request
/// (DecodeConfig::fields), and the rest.
std::string known_fields() {
  std::string known = "text";
  DecodeConfig().fields([&](const char* key, auto&, const Option& option) {
    if (option.in_request) known += ", " + std::string(key);
  });
  return known +
         ", scores, alignment, prefix, constraints, tgt_lang, split, format, casing, api_key";
}

RequestError bad_request(const std::string& message) { return RequestError(400, message); }

}  // namespace

json parse_json_body(const std::string& body, int max_depth) {
  size_t bad_byte = 0;
  if (!valid_utf8(body, &bad_byte)) {
    throw bad_request("the body is not valid UTF-8 (byte " + std::to_string(bad_byte + 1) + ")");
  }
  const json::parser_callback_t depth_check = [max_depth](int depth, json::parse_event_t, json&) {
    if (depth > max_depth) {
      throw bad_request("the JSON nests deeper than " + std::to_string(max_depth) + " levels");
    }
    return true;
  };
  try {
    return json::parse(body, depth_check);
  } catch (const json::parse_error& e) {
    throw bad_request(std::string("malformed JSON: ") + e.what());
  }
}

namespace {

/// "tgt_lang": a non-empty string (whether the model has it is the server's to check).
std::string language_field(const json& value) {
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw bad_request("\"tgt_lang\" must be a language code string, not " + value.dump());
  }
  return value.get<std::string>();
}

int64_t integer_field(const json& value, const std::string& name) {
  if (!value.is_number_integer()) {
    throw bad_request("\"" + name + "\" must be an integer, not " + value.dump());
  }
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t(std::numeric_limits<int32_t>::max())) {
    throw bad_request("\"" + name + "\" = " + value.dump() + " is out of range");
  }
  return value.get<int64_t>();
}

/// A number field ("length_penalty": 1.0).
double number_field(const json& value, const std::string& name) {
  if (!value.is_number()) {
    throw bad_request("\"" + name + "\" must be a number, not " + value.dump());
  }
  return value.get<double>();
}

std::vector<std::string> text_field(const json& value, const ServeLimits& limits) {
  std::vector<std::string> texts;
  if (value.is_string()) {
    texts.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    if (value.size() > limits.max_texts) {
      throw RequestError(413, "\"text\" has " + std::to_string(value.size()) +
                                  " entries, above this server's limit of " +
                                  std::to_string(limits.max_texts) + " (--max-texts)");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        throw bad_request("\"text[" + std::to_string(i) + "]\" must be a string, not " +
                          value[i].dump());
      }
      texts.push_back(value[i].get<std::string>());
    }
  } else {
    throw bad_request("\"text\" must be a string or a list of strings, not " + value.dump());
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].size() > limits.max_text_bytes) {
      throw RequestError(413, "\"text[" + std::to_string(i) + "]\" has " +
                                  std::to_string(texts[i].size()) +
                                  " bytes, above this server's limit of " +
                                  std::to_string(limits.max_text_bytes) + " (--max-text-bytes)");
    }
  }
  return texts;
}

/// A list of strings named `name`, each within the text limit.
std::vector<std::string> string_list(const json& value, const std::string& name,
                                     const ServeLimits& limits) {
  if (!value.is_array()) {
    throw bad_request("\"" + name + "\" must be a list of strings, not " + value.dump());
  }
  std::vector<std::string> strings;
  for (size_t i = 0; i < value.size(); ++i) {
    const auto item = name + "[" + std::to_string(i) + "]";
    if (!value[i].is_string()) {
      throw bad_request("\"" + item + "\" must be a string, not " + value[i].dump());
    }
    strings.push_back(value[i].get<std::string>());
    if (strings.back().size() > limits.max_text_bytes) {
      throw RequestError(413, "\"" + item + "\" has " + std::to_string(strings.back().size()) +
                                  " bytes, above this server's limit of " +
                                  std::to_string(limits.max_text_bytes) + " (--max-text-bytes)");
    }
  }
  return strings;
}

/// "prefix" and "constraints", shaped like "text": for one text string, a string and a list of
/// strings; for a list of texts, one of those per text.
void guide_fields(const json& root, bool one_text, TranslateRequest& request,
                  const ServeLimits& limits) {
  const size_t texts = request.texts.size();
  if (root.contains("prefix")) {
    const auto& value = root["prefix"];
    if (one_text) {
      if (!value.is_string()) {
        throw bad_request(
            "\"prefix\" must be a string (the start of the translation of \"text\"), not " +
            value.dump());
      }
      request.prefixes = {value.get<std::string>()};
      if (request.prefixes[0].size() > limits.max_text_bytes) {
        throw RequestError(413, "\"prefix\" is above this server's limit of " +
                                    std::to_string(limits.max_text_bytes) +
                                    " bytes (--max-text-bytes)");
      }
    } else {
      request.prefixes = string_list(value, "prefix", limits);
      if (request.prefixes.size() != texts) {
        throw bad_request("\"prefix\" has " + std::to_string(request.prefixes.size()) +
                          " entries but \"text\" " + std::to_string(texts) + ": one per text");
      }
    }
  }
  if (root.contains("constraints")) {
    const auto& value = root["constraints"];
    if (one_text) {
      request.constraints = {string_list(value, "constraints", limits)};
    } else {
      if (!value.is_array() || value.size() != texts) {
        throw bad_request("\"constraints\" must be a list of " + std::to_string(texts) +
                          " lists of strings, one per text, not " + value.dump());
      }
      for (size_t i = 0; i < texts; ++i) {
        request.constraints.push_back(
            string_list(value[i], "constraints[" + std::to_string(i) + "]", limits));
      }
    }
  }
}

/// Validates the decoding options as `nmt translate` does; the message names the request's
/// fields ("beam", not "decode.beam").
void validate_decode(const DecodeConfig& decode) {
  try {
    decode.validate();
  } catch (const Error& e) {
    std::string message = e.what();
    for (size_t at = message.find("decode."); at != std::string::npos;
         at = message.find("decode.", at)) {
      message.erase(at, 7);
    }
    throw bad_request(message);
  }
}

/// A choice field ("split": "none"), by the names the command line takes.
template <class E>
E choice_field(const json& value, const std::string& name) {
  if (!value.is_string()) {
    throw bad_request("\"" + name + "\" must be one of " + choice_list<E>() + ", not " +
                      value.dump());
  }
  const auto choice = parse_choice<E>(value.get<std::string>());
  if (!choice) {
    throw bad_request("\"" + name + "\" = " + value.dump() + " is not valid: choose one of " +
                      choice_list<E>());
  }
  return *choice;
}

/// Which field asks for what works on whole texts only; "" when none does.
std::string per_text_field(const json& root, const TranslateRequest& request) {
  for (const char* field : {"alignment", "prefix", "constraints"}) {
    if (root.contains(field) && !(root[field].is_boolean() && !root[field].get<bool>())) {
      return field;
    }
  }
  return request.decode.nbest > 1 ? "nbest" : "";
}

/// "split", "format" and "casing" over `defaults`, or none for a request that works per text.
std::optional<TextOptions> text_fields(const json& root, const TranslateRequest& request,
                                       TextOptions defaults) {
  if (root.contains("split")) defaults.split = choice_field<SplitMode>(root["split"], "split");
  if (root.contains("format")) defaults.format = choice_field<TextFormat>(root["format"], "format");
  if (root.contains("casing")) defaults.casing = choice_field<CasingMode>(root["casing"], "casing");
  const auto field = per_text_field(root, request);
  if (field.empty()) return defaults;
  if (defaults.format == TextFormat::kHtml) {
    throw bad_request("\"format\": \"html\" translates documents; \"" + field +
                      "\" works on plain texts (\"format\": \"text\")");
  }
  if (root.contains("split") && defaults.split == SplitMode::kSentences) {
    throw bad_request("\"split\": \"sentences\" translates sentence by sentence; \"" + field +
                      "\" works on whole texts: use \"split\": \"none\"");
  }
  return std::nullopt;
}

/// Sets the decode key `key` from `value` when a request may set it (Option::request); false
/// when it is no such key. A value of the wrong type is a 400 naming the field.
bool decode_field(DecodeConfig& decode, const std::string& key, const json& value) {
  bool found = false;
  decode.fields([&](const char* name, auto& field, const Option& option) {
    if (!option.in_request || key != name) return;
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, int64_t>) {
      field = integer_field(value, key);
    } else if constexpr (std::is_same_v<T, double>) {
      field = number_field(value, key);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) throw bad_request("\"" + key + "\" must be true or false");
      field = value.get<bool>();
    } else if constexpr (std::is_enum_v<T>) {
      field = choice_field<T>(value, key);
    } else {
      if (!value.is_string()) throw bad_request("\"" + key + "\" must be a string");
      field = value.get<std::string>();
    }
    found = true;
  });
  return found;
}

void check_beam_limit(const char* name, int64_t value, const ServeLimits& limits) {
  if (value > limits.max_beam) {
    throw bad_request("\"" + std::string(name) + "\" = " + std::to_string(value) +
                      " is above this server's limit of " + std::to_string(limits.max_beam) +
                      " (--max-beam)");
  }
}

}  // namespace

TranslateRequest parse_translate_request(const std::string& body, const DecodeConfig& defaults,
                                         const ServeLimits& limits, const TextOptions& text) {
  const json root = parse_json_body(body, limits.max_json_depth);
  if (!root.is_object()) throw bad_request("the body must be a JSON object with a \"text\" field");
  TranslateRequest request;
  request.decode = defaults;
  bool has_text = false;
  for (const auto& [key, value] : root.items()) {
    if (key == "text") {
      request.texts = text_field(value, limits);
      has_text = true;
    } else if (decode_field(request.decode, key, value)) {
      if (key == "beam") check_beam_limit("beam", request.decode.beam, limits);
      if (key == "nbest") check_beam_limit("nbest", request.decode.nbest, limits);
    } else if (key == "scores") {
      if (!value.is_boolean()) throw bad_request("\"scores\" must be true or false");
      request.scores = value.get<bool>();
    } else if (key == "alignment") {
      if (!value.is_boolean()) throw bad_request("\"alignment\" must be true or false");
      request.alignment = value.get<bool>();
    } else if (key == "tgt_lang") {
      request.tgt_lang = language_field(value);
    } else if (key == "api_key") {
      continue;  // the server's access control reads it
    } else if (key == "prefix" || key == "constraints" || key == "split" || key == "format" ||
               key == "casing") {
      continue;  // read after the others
    } else {
      throw bad_request("unknown field \"" + key + "\" (known: " + known_fields() + ")");
    }
  }
  if (!has_text) throw bad_request("missing field \"text\" (a string or a list of strings)");
  guide_fields(root, root["text"].is_string(), request, limits);
  request.decode.complete(/*search_given=*/false, root.contains("beam"));  // as the CLI does
  validate_decode(request.decode);
  if (request.decode.nbest > 1 || request.alignment) request.scores = true;
  request.text = text_fields(root, request, text);
  return request;
}

AttentionRequest parse_attention_request(const std::string& body, const ModelConfig& model,
                                         const ServeLimits& limits) {
  const json root = parse_json_body(body, limits.max_json_depth);
  if (!root.is_object() || !root.contains("text") || !root["text"].is_string()) {
    throw bad_request("the body must be a JSON object with a \"text\" string");
  }
  AttentionRequest request;
  for (const auto& [key, value] : root.items()) {
    if (key == "text") {
      request.text = text_field(value, limits).front();
    } else if (key == "layer") {
      request.view.layer = integer_field(value, key);
    } else if (key == "head") {
      request.view.head = integer_field(value, key);
    } else if (key == "tgt_lang") {
      request.tgt_lang = language_field(value);
    } else if (key == "api_key") {
      continue;  // the server's access control reads it
    } else {
      throw bad_request("unknown field \"" + key +
                        "\" (known: text, layer, head, tgt_lang, api_key)");
    }
  }
  try {
    request.view.validate(model);
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
  return request;
}

ScoreRequest parse_score_request(const std::string& body, const ServeLimits& limits) {
  const json root = parse_json_body(body, limits.max_json_depth);
  if (!root.is_object()) throw bad_request("the body must be a JSON object with \"src\", \"tgt\"");
  ScoreRequest request;
  for (const auto& [key, value] : root.items()) {
    if (key == "src") {
      request.src = text_field(value, limits);
    } else if (key == "tgt") {
      request.tgt = text_field(value, limits);
    } else if (key == "tgt_lang") {
      request.tgt_lang = language_field(value);
    } else if (key == "api_key") {
      continue;  // the server's access control reads it
    } else {
      throw bad_request("unknown field \"" + key + "\" (known: src, tgt, tgt_lang, api_key)");
    }
  }
  if (!root.contains("src") || !root.contains("tgt")) {
    throw bad_request("missing field \"" + std::string(root.contains("src") ? "tgt" : "src") +
                      "\" (a string or a list of strings, one per pair)");
  }
  if (request.src.size() != request.tgt.size()) {
    throw bad_request("\"src\" has " + std::to_string(request.src.size()) + " texts but \"tgt\" " +
                      std::to_string(request.tgt.size()) + ": one target per source");
  }
  return request;
}

std::vector<SourceLine> encode_texts(const std::vector<std::string>& texts,
                                     const LineEncoder& encode) {
  std::vector<SourceLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    try {
      lines.push_back(encode(texts[i], i + 1));
    } catch (const Error& e) {
      // The text, not the server, is at fault: the client learns which one.
      throw bad_request("\"text[" + std::to_string(i) + "]\" cannot be tokenized: " + e.what());
    }
  }
  return lines;
}

json translation_response(const std::vector<TranslationResult>& results,
                          const TranslateRequest& request,
                          const std::vector<std::vector<std::string>>& alignments) {
  json translations = json::array(), warnings = json::array(), errors = json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    // The translator numbers lines within its batch; name the request's own index instead.
    const auto own = [](const std::string& message) {
      const auto colon = message.find(": ");
      return colon == std::string::npos ? message : message.substr(colon + 2);
    };
    if (result.warning) warnings.push_back({{"index", i}, {"message", own(*result.warning)}});
    if (result.error) errors.push_back({{"index", i}, {"message", own(*result.error)}});
    if (!request.scores) {
      translations.push_back(result.best());
      continue;
    }
    const auto alignment = [&](size_t k) {
      return i < alignments.size() && k < alignments[i].size() ? alignments[i][k] : "";
    };
    json entry = {{"text", result.best()},
                  {"score", result.nbest.empty() ? 0.0 : result.nbest.front().score}};
    if (request.alignment) entry["alignment"] = alignment(0);
    if (request.decode.nbest > 1) {
      json nbest = json::array();
      for (size_t k = 0; k < result.nbest.size(); ++k) {
        json hypothesis = {{"text", result.nbest[k].text}, {"score", result.nbest[k].score}};
        if (request.alignment) hypothesis["alignment"] = alignment(k);
        nbest.push_back(std::move(hypothesis));
      }
      entry["nbest"] = std::move(nbest);
    }
    translations.push_back(std::move(entry));
  }
  json response = {{"translations", std::move(translations)}};
  if (!warnings.empty()) response["warnings"] = std::move(warnings);
  if (!errors.empty()) response["errors"] = std::move(errors);
  return response;
}

std::string error_body(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace nmt
