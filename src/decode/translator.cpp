#include "decode/translator.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "core/special_ids.h"
#include "data/corpus.h"
#include "decode/mbr.h"
#include "decode/search.h"

namespace nmt {
namespace {

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

/// Throws unless `min` <= `index` < `count`, naming the index, the model's count of `what`
/// and the valid range.
void check_index(const std::string& what, int64_t index, int64_t min, int64_t count,
                 const std::string& meaning) {
  if (index < min || index >= count) {
    throw Error("attention " + what + " " + std::to_string(index) + " is out of range: the " +
                "model has " + std::to_string(count) + " " + what + "s (valid: " +
                std::to_string(min) + ".." + std::to_string(count - 1) + "; " + meaning + ")");
  }
}

/// Gives each translation its new score, orders them by it (highest first; ties keep the
/// current order) and keeps the first `keep`.
void rescore(std::vector<TranslatedText>& nbest, const std::vector<double>& scores, int64_t keep) {
  for (size_t i = 0; i < nbest.size(); ++i) nbest[i].score = scores[i];
  std::stable_sort(
      nbest.begin(), nbest.end(),
      [](const TranslatedText& a, const TranslatedText& b) { return a.score > b.score; });
  if (nbest.size() > size_t(keep)) nbest.resize(size_t(keep));
}

}  // namespace

void AttentionOptions::validate(const ModelConfig& model) const {
  check_index("layer", layer, -model.decoder_layers, model.decoder_layers,
              "negative counts from the end, -1 = the last decoder layer");
  check_index("head", head, -1, model.n_heads, "-1 = the mean over heads");
}

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

void Translator::set_config(DecodeConfig config) {
  config.validate();
  config_ = std::move(config);
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
      check_line_guide(line, models_, config_);  // the tag takes a place of the output limit
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
  DecodeConfig search = config_;
  if (config_.mbr > 0 && config_.sample == 0) search.nbest = config_.mbr;  // the candidates
  auto hypotheses = decode_all(models_, sources, search, device_, stop_, workers_, guides);
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
    if (config_.sample > 0) {
      nbest = select_from_samples(hypotheses[k]);
      continue;
    }
    for (auto& h : hypotheses[k]) {
      nbest.push_back({tokenizer_.decode_tgt(h.tokens), h.score, std::move(h.tokens)});
    }
    if (config_.mbr > 0) select_by_mbr(nbest, hypotheses[k]);
  }
  return results;
}

void Translator::select_by_mbr(std::vector<TranslatedText>& nbest,
                               const std::vector<Hypothesis>& hypotheses) const {
  std::vector<std::string> texts;
  std::vector<double> log_probs;
  for (size_t i = 0; i < nbest.size(); ++i) {
    texts.push_back(nbest[i].text);
    log_probs.push_back(hypotheses[i].log_prob);
  }
  rescore(nbest, mbr_expected_utilities(texts, log_probs, config_.mbr_metric), config_.nbest);
}

std::vector<TranslatedText> Translator::select_from_samples(std::vector<Hypothesis>& draws) const {
  // Distinct translations by text (two segmentations can read the same), each with the
  // log-probability of its most probable draw and how many draws gave it.
  std::vector<TranslatedText> distinct;
  std::vector<double> counts;
  std::unordered_map<std::string, size_t> index;
  for (auto& draw : draws) {
    auto text = tokenizer_.decode_tgt(draw.tokens);
    const auto [it, inserted] = index.emplace(text, distinct.size());
    if (inserted) {
      distinct.push_back({std::move(text), draw.log_prob, std::move(draw.tokens)});
      counts.push_back(1.0);
      continue;
    }
    auto& seen = distinct[it->second];
    counts[it->second] += 1.0;
    if (draw.log_prob > seen.score)
      seen.score = draw.log_prob, seen.tokens = std::move(draw.tokens);
  }
  // Most probable first (ties: the earlier draw), counts kept alongside.
  std::vector<size_t> order(distinct.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return distinct[a].score > distinct[b].score; });
  std::vector<TranslatedText> ranked;
  std::vector<std::string> references;
  std::vector<double> weights;
  for (const size_t i : order) {
    references.push_back(distinct[i].text);
    weights.push_back(counts[i] / static_cast<double>(draws.size()));
    ranked.push_back(std::move(distinct[i]));
  }
  if (config_.mbr == 0) {
    if (ranked.size() > size_t(config_.nbest)) ranked.resize(size_t(config_.nbest));
    return ranked;
  }
  // Candidates: the decode.mbr most probable; pseudo-references: every draw (Monte Carlo).
  if (ranked.size() > size_t(config_.mbr)) ranked.resize(size_t(config_.mbr));
  std::vector<std::string> candidates(references.begin(), references.begin() + ranked.size());
  rescore(ranked, mbr_expected_utilities(candidates, references, weights, config_.mbr_metric),
          config_.nbest);
  return ranked;
}

std::vector<std::string> Translator::translate_texts(const std::vector<std::string>& lines) {
  std::vector<std::string> texts;
  for (const auto& result : translate(lines)) {
    if (!result.ok()) throw Error(*result.error);
    texts.push_back(result.best());
  }
  return texts;
}

AttentionMap Translator::attention(const std::string& source, const std::vector<int64_t>& target,
                                   const AttentionOptions& options) {
  if (!valid_utf8(source)) throw Error("attention: the source is not valid UTF-8");
  options.validate(model()->config());
  auto src_ids = encode_line(tokenizer_, models_, source, 1).ids;
  AttentionMap map;
  map.src_pieces = tokenizer_.src_pieces(source);
  map.src_pieces.resize(src_ids.size());    // truncated like the ids
  std::vector<int64_t> tgt_ids = {kBosId};  // bos + target predicts target + eos
  // A multilingual model's tag, where translation puts it (a row or a column of its own).
  if (tags_.active()) {
    const auto limit = static_cast<size_t>(models_.max_len() - 1);
    if (const int64_t tag = tags_.source_tag(tgt_lang_); tag >= 0) {
      if (src_ids.size() >= limit) src_ids.resize(limit - 1), map.src_pieces.resize(limit - 1);
      src_ids.insert(src_ids.begin(), tag);
      map.src_pieces.insert(map.src_pieces.begin(), language_tag(tgt_lang_));
    }
    if (const int64_t tag = tags_.target_tag(tgt_lang_); tag >= 0) {
      tgt_ids.push_back(tag);
      map.tgt_pieces.push_back(language_tag(tgt_lang_));
    }
  }
  src_ids.push_back(kEosId);
  tgt_ids.insert(tgt_ids.end(), target.begin(), target.end());
  map.weights = cross_attention(src_ids, tgt_ids, options);  // [tgt_len, src_len]
  map.src_pieces.push_back("</s>");
  for (auto& piece : tokenizer_.tgt_pieces(target)) map.tgt_pieces.push_back(std::move(piece));
  map.tgt_pieces.push_back("</s>");
  return map;
}

at::Tensor Translator::cross_attention(const std::vector<int64_t>& src_ids,
                                       const std::vector<int64_t>& tgt_ids,
                                       const AttentionOptions& options) {
  torch::NoGradGuard no_grad;
  const auto to_device = [&](const std::vector<int64_t>& ids) {
    return at::tensor(at::ArrayRef<int64_t>(ids), at::kLong).unsqueeze(0).to(device_);
  };
  const auto src = to_device(src_ids);  // [1, src_len]
  const auto tgt = to_device(tgt_ids);  // [1, tgt_len]
  auto model = models_.front();
  const auto src_mask = model->make_src_mask(src);
  const auto memory = model->encode(src, src_mask);
  const auto out = model->decoder->hidden(tgt, memory, model->make_tgt_mask(tgt), src_mask,
                                          /*need_weights=*/true);
  // AttentionOptions::validate has checked the indices against the model's config.
  const auto layers = static_cast<int64_t>(out.attention.size());
  const auto& layer = out.attention[options.layer < 0 ? layers + options.layer : options.layer];
  at::Tensor weights = layer[0];  // [heads, tgt_len, src_len]
  weights = options.head == -1 ? weights.mean(0) : weights[options.head];
  return weights.to(at::kCPU, at::kFloat).contiguous();  // [tgt_len, src_len]
}

}  // namespace nmt
