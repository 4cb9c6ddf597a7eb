#include "decode/translator.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/special_ids.h"
#include "data/corpus.h"
#include "decode/search.h"

namespace nmt {
namespace {

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

}  // namespace

SourceLine encode_line(const Tokenizer& tokenizer, const Ensemble& models, const std::string& line,
                       size_t line_number) {
  SourceLine source;
  source.line_number = line_number;
  size_t bad_byte = 0;
  if (!valid_utf8(line, &bad_byte)) {
    source.result.error = "line " + std::to_string(line_number) + ": invalid UTF-8 at byte " +
                          std::to_string(bad_byte + 1) + "; line not translated";
    return source;
  }
  if (blank(line)) {
    source.result.nbest.push_back({});
    return source;
  }
  source.ids = tokenizer.encode_src(line);
  const auto limit = static_cast<size_t>(models.max_len() - 1);  // room for eos
  if (source.ids.size() > limit) {
    source.result.warning =
        "line " + std::to_string(line_number) + ": " + std::to_string(source.ids.size()) +
        " source pieces, more than the model's limit of " + std::to_string(limit) +
        " (model.max_len - 1); translating only the first " + std::to_string(limit);
    source.ids.resize(limit);
  }
  return source;
}

OutputGuide encode_guide(const Tokenizer& tokenizer, const std::string& prefix,
                         const std::vector<std::string>& constraints, const std::string& what) {
  const auto encode = [&](const std::string& text, const std::string& name) {
    size_t bad_byte = 0;
    if (!valid_utf8(text, &bad_byte)) {
      throw Error(what + ": the " + name + " is not valid UTF-8 (byte " +
                  std::to_string(bad_byte + 1) + ")");
    }
    auto ids = tokenizer.encode_tgt(text);
    if (std::find(ids.begin(), ids.end(), kUnkId) == ids.end()) return ids;
    std::string missing;  // the characters that encode as unk on their own
    for (size_t i = 0; i < text.size();) {
      size_t length = 1;
      while (i + length < text.size() &&
             (static_cast<unsigned char>(text[i + length]) & 0xC0) == 0x80) {
        ++length;
      }
      const auto character = text.substr(i, length);
      const auto alone = tokenizer.encode_tgt(character);
      if (std::find(alone.begin(), alone.end(), kUnkId) != alone.end() &&
          missing.find(character) == std::string::npos) {
        missing += (missing.empty() ? "'" : ", '") + character + "'";
      }
      i += length;
    }
    throw Error(what + ": the " + name + " \"" + text +
                "\" cannot be encoded: the target vocabulary lacks " +
                (missing.empty() ? std::string("some of its characters") : missing) +
                " (the output could only show them as \u2047)");
  };
  OutputGuide guide;
  guide.prefix = encode(prefix, "prefix");
  for (size_t i = 0; i < constraints.size(); ++i) {
    const auto name = "constraint " + std::to_string(i + 1);
    if (blank(constraints[i])) throw Error(what + ": " + name + " is empty");
    guide.constraints.push_back(encode(constraints[i], name));
  }
  return guide;
}

void check_line_guide(SourceLine& line, const Ensemble& models, const DecodeConfig& config) {
  if (!line.needs_model() || line.guide.empty()) return;
  try {
    check_guide(line.guide,
                max_output_length(models, static_cast<int64_t>(line.ids.size()), config), config,
                "line " + std::to_string(line.line_number));
  } catch (const Error& e) {
    line.result.error = e.what();
  }
}

const std::string& TranslationResult::best() const {
  static const std::string empty;
  return nbest.empty() ? empty : nbest.front().text;
}

Translator::Translator(Ensemble models, Tokenizer tokenizer, DecodeConfig config, at::Device device)
    : models_(std::move(models)),
      tokenizer_(std::move(tokenizer)),
      config_(std::move(config)),
      device_(device),
      log_(&std::cerr) {
  config_.validate();
  for (size_t i = 0; i < models_.size(); ++i) {
    auto member = models_.member(i);
    if (member->is_training()) member->eval();  // a shared model in eval() mode is only read
  }
}

void Translator::set_language(LanguageTags tags, std::string tgt_lang) {
  tags_ = std::move(tags);
  tgt_lang_ = std::move(tgt_lang);
}

TeacherForcing Translator::teacher_forcing() const {
  return {model(), tokenizer_, device_, tags_, tgt_lang_};
}

void Translator::report(const std::string& message) const {
  if (log_ != nullptr) *log_ << message << std::endl;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& lines,
                                                     size_t first_line,
                                                     const std::vector<OutputGuide>& guides) {
  if (!guides.empty() && guides.size() != lines.size()) {
    throw Error("translate: " + std::to_string(guides.size()) + " prefixes/constraints for " +
                std::to_string(lines.size()) + " lines");
  }
  std::vector<SourceLine> encoded;
  for (size_t i = 0; i < lines.size(); ++i) {
    encoded.push_back(encode_line(tokenizer_, models_, lines[i], first_line + i));
    if (!guides.empty() && !guides[i].error.empty() && encoded.back().result.ok()) {
      encoded.back().result = {};
      encoded.back().result.error = guides[i].error;
    } else if (!guides.empty()) {
      encoded.back().guide = guides[i];
      check_line_guide(encoded.back(), models_, config_);
    }
    const auto& result = encoded.back().result;
    if (result.error) report("error: " + *result.error);
    if (result.warning) report("warning: " + *result.warning);
  }
  return translate_encoded(std::move(encoded));
}

std::vector<TranslationResult> Translator::translate_encoded(std::vector<SourceLine> lines) {
  return translate_encoded(std::move(lines), config_);
}

std::vector<TranslationResult> Translator::translate_encoded(std::vector<SourceLine> lines,
                                                             const DecodeConfig& options) {
  std::vector<TranslationResult> results;
  std::vector<std::vector<int64_t>> sources;
  std::vector<OutputGuide> guides;  // one per source once any line has one
  std::vector<size_t> positions;    // line index of each entry of `sources`
  std::vector<size_t> numbers;      // its line number
  // Language tags: "<2xx>" before the source (room made by dropping its last piece at the
  // model's limit), or forced as the first output token (dropped again after decoding).
  const bool target_tags = tags_.on_target();
  const auto limit = static_cast<size_t>(models_.max_len() - 1);
  for (auto& line : lines) {
    if (!tags_.active() || !line.needs_model()) continue;
    const std::string& lang = line.tgt_lang.empty() ? tgt_lang_ : line.tgt_lang;
    if (const int64_t tag = tags_.source_tag(lang); tag >= 0) {
      if (line.ids.size() >= limit) line.ids.resize(limit - 1);
      line.ids.insert(line.ids.begin(), tag);
    }
    if (const int64_t tag = tags_.target_tag(lang); tag >= 0) {
      line.guide.prefix.insert(line.guide.prefix.begin(), tag);
      check_line_guide(line, models_, options);  // the tag takes a place of the output limit
    }
  }
  bool guided = target_tags;
  for (const auto& line : lines) guided = guided || (line.needs_model() && !line.guide.empty());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].needs_model()) {
      sources.push_back(std::move(lines[i].ids));
      if (guided) guides.push_back(std::move(lines[i].guide));
      positions.push_back(i);
      numbers.push_back(lines[i].line_number);
    }
    results.push_back(std::move(lines[i].result));
  }
  if (sources.empty()) return results;
  const auto searcher = make_searcher(options);
  auto hypotheses = decode_all(models_, sources, *searcher, device_, stop_, workers_, guides);
  // The forced tag, and any tag the model put elsewhere, are not part of a translation.
  if (tags_.active()) {
    for (auto& list : hypotheses) {
      for (auto& h : list) tags_.strip(h.tokens);
    }
  }
  for (size_t k = 0; k < positions.size(); ++k) {
    auto& nbest = results[positions[k]].nbest;
    if (hypotheses[k].empty()) {  // decoding stopped before this line's batch
      results[positions[k]].interrupted = true;
      continue;
    }
    if (const int64_t unmet = hypotheses[k].front().unmet_constraints; unmet > 0) {
      const auto message = "line " + std::to_string(numbers[k]) + ": " + std::to_string(unmet) +
                           " of " + std::to_string(guides[k].constraints.size()) +
                           " constraints not met within the output length limit "
                           "(decode.max_len_offset)";
      auto& warning = results[positions[k]].warning;
      warning = warning ? *warning + "; " + message : message;  // a cut source keeps its warning
      report("warning: " + message);
    }
    nbest = searcher->rank(std::move(hypotheses[k]), tokenizer_);
  }
  return results;
}

std::vector<std::string> Translator::translate_texts(const std::vector<std::string>& lines) {
  std::vector<std::string> texts;
  for (const auto& result : translate(lines)) {
    if (!result.ok()) throw Error(*result.error);
    texts.push_back(result.best());
  }
  return texts;
}

}  // namespace nmt
