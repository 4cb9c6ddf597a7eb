#include "text/document.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "data/corpus.h"
#include "decode/alignment.h"

namespace nmt {
namespace {

bool blank_text(const std::string& text) { return text_words(text, {0, text.size()}).empty(); }

/// Word index `i` of `from` words as an index of `to` words (the same when the counts agree).
size_t rescale(size_t i, size_t from, size_t to) {
  if (from == to || to == 0) return std::min(i, to == 0 ? 0 : to - 1);
  return std::min(to - 1, i * to / std::max<size_t>(1, from));
}

/// Links along the diagonal: what a segment without tags gets, so that a tag between segments
/// finds the end of the one before it.
std::vector<std::pair<size_t, size_t>> diagonal(size_t n_src, size_t n_tgt) {
  std::vector<std::pair<size_t, size_t>> links;
  if (n_src == 0 || n_tgt == 0) return links;
  for (size_t s = 0; s < n_src; ++s) links.emplace_back(s, rescale(s, n_src, n_tgt));
  return links;
}

void append_message(std::optional<std::string>& to, const std::string& message) {
  to = to ? *to + "; " + message : message;
}

}  // namespace

TextPlan::TextPlan(const std::vector<std::string>& inputs, const TextOptions& options,
                   const PieceCounter& count, size_t first_line)
    : options_(options), count_(count), first_line_(first_line) {
  inputs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input& input = inputs_[i];
    const auto line = "line " + std::to_string(first_line + i);
    size_t bad_byte = 0;
    if (!valid_utf8(inputs[i], &bad_byte)) {
      input.early.error = line + ": invalid UTF-8 at byte " + std::to_string(bad_byte + 1) +
                          "; line not translated";
      input.done_early = true;
    } else if (options.format == TextFormat::kHtml) {
      input.html = parse_html(inputs[i]);
      if (!input.html.repaired.empty()) {
        input.warnings.push_back(line +
                                 ": malformed HTML, repaired as libxml2's HTML parser "
                                 "repairs it: " +
                                 input.html.repaired);
      }
      for (const auto& block : input.html.blocks) add_text(input, i, block.text, &block);
    } else if (blank_text(inputs[i])) {
      input.early.nbest.push_back({});
      input.done_early = true;
    } else {
      add_text(input, i, inputs[i], nullptr);
    }
  }
}

void TextPlan::add_text(Input& input, size_t index, const std::string& text,
                        const TextBlock* block) {
  Layout layout{text, {}, block};
  std::vector<TextSpan> sentences;
  if (options_.split == SplitMode::kSentences) {
    sentences = split_sentences(text, options_.src_lang);
  } else if (const auto words = text_words(text, {0, text.size()}); !words.empty()) {
    sentences.push_back({words.front().begin, words.back().end});
  }
  // Each sentence with its casing; a mixed-case one cut again at unpunctuated boundaries.
  std::vector<std::pair<TextSpan, SourceCasing>> cased;
  // (Capitals mark no boundary in an ALL CAPS or Title Case sentence, whatever --casing is.)
  for (const auto& sentence : sentences) {
    const auto detected = detect_casing(text.substr(sentence.begin, sentence.size()));
    const auto casing = options_.casing == CasingMode::kAuto ? detected : SourceCasing::kAsWritten;
    if (detected == SourceCasing::kAsWritten && options_.words &&
        options_.split == SplitMode::kSentences) {
      for (const auto& part : split_run_ons(text, sentence, *options_.words))
        cased.emplace_back(part, casing);
    } else {
      cased.emplace_back(sentence, casing);
    }
  }
  const WordCasing* words = options_.words.get();
  for (const auto& item : cased) {
    const TextSpan sentence = item.first;
    const SourceCasing casing = item.second;
    const auto model_text = [&](TextSpan span, bool first) {
      const auto original = text.substr(span.begin, span.size());
      return casing == SourceCasing::kAsWritten
                 ? original
                 : sentence_case(original, options_.src_lang, first, words);
    };
    const size_t limit = options_.max_pieces == 0 ? SIZE_MAX : options_.max_pieces;
    const auto parts = split_to_fit(text, sentence, limit, [&](const std::string& s) {
      return count_(casing == SourceCasing::kAsWritten
                        ? s
                        : sentence_case(s, options_.src_lang, true, words));
    });
    if (parts.size() > 1) {
      input.warnings.push_back("line " + std::to_string(first_line_ + index) + ": a sentence of " +
                               std::to_string(count_(model_text(sentence, true))) +
                               " source pieces, more than the limit of " +
                               std::to_string(options_.max_pieces) + ", was translated in " +
                               std::to_string(parts.size()) + " parts");
    }
    for (size_t p = 0; p < parts.size(); ++p) {
      bool tagged = false;
      for (size_t t = 0; block != nullptr && t < block->tags.size() && !tagged; ++t) {
        const auto& span = block->tags[t].span;
        tagged = span.begin < parts[p].end &&
                 (span.end > parts[p].begin || (span.empty() && span.begin > parts[p].begin));
      }
      layout.placed.push_back({sources_.size(), parts[p], casing});
      sources_.push_back(model_text(parts[p], p == 0));
      owner_.push_back(index);
      tagged_.push_back(tagged);
    }
  }
  input.layouts.push_back(std::move(layout));
}

std::string TextPlan::join(const Layout& layout, const std::vector<TranslationResult>& results,
                           const SegmentAligner& align) const {
  std::string out;
  WordLinks links;  // over the whole text and its whole translation
  size_t at = 0;
  for (const auto& placed : layout.placed) {
    out += layout.text.substr(at, placed.span.begin - at);
    const auto& result = results[placed.segment];
    std::string translation = result.best();
    if (placed.casing == SourceCasing::kUpper)
      translation = upper_case(translation, options_.tgt_lang);
    if (layout.block != nullptr) {
      const auto src_words = text_words(layout.text, placed.span);
      auto tgt_words = text_words(translation, {0, translation.size()});
      std::vector<std::pair<size_t, size_t>> segment_links;
      size_t n_src = src_words.size(), n_tgt = tgt_words.size();
      if (needs_alignment(placed.segment) && !result.nbest.empty() && align) {
        const auto aligned = align(sources_[placed.segment], result.nbest.front());
        segment_links = aligned.links;
        n_src = aligned.src_words.size(), n_tgt = aligned.tgt_words.size();
      } else {
        segment_links = diagonal(n_src, n_tgt);
      }
      const size_t src_base = links.src_words.size(), tgt_base = links.tgt_words.size();
      for (const auto& [s, t] : segment_links) {
        if (src_words.empty() || tgt_words.empty()) break;
        links.links.emplace_back(src_base + rescale(s, n_src, src_words.size()),
                                 tgt_base + rescale(t, n_tgt, tgt_words.size()));
      }
      links.src_words.insert(links.src_words.end(), src_words.begin(), src_words.end());
      for (auto& word : tgt_words)
        links.tgt_words.push_back({word.begin + out.size(), word.end + out.size()});
    }
    out += translation;
    at = placed.span.end;
  }
  out += layout.text.substr(at);
  if (layout.block == nullptr) return out;
  return render_source(place_tags(*layout.block, out, links));
}

std::vector<TranslationResult> TextPlan::assemble(const std::vector<TranslationResult>& results,
                                                  const SegmentAligner& align) const {
  std::vector<TranslationResult> out(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& input = inputs_[i];
    TranslationResult& result = out[i];
    if (input.done_early) {
      result = input.early;
      continue;
    }
    TranslatedText joined;
    for (const auto& layout : input.layouts) {
      for (const auto& placed : layout.placed) {
        const auto& part = results[placed.segment];
        if (part.interrupted) result.interrupted = true;
        if (part.error && !result.error) result.error = part.error;
        if (part.warning) append_message(result.warning, *part.warning);
        if (part.nbest.empty()) continue;
        joined.score += part.nbest.front().score;
        const auto& tokens = part.nbest.front().tokens;
        joined.tokens.insert(joined.tokens.end(), tokens.begin(), tokens.end());
      }
    }
    for (const auto& warning : input.warnings) append_message(result.warning, warning);
    if (result.interrupted || result.error) continue;
    if (options_.format == TextFormat::kHtml) {
      std::vector<std::string> rendered;
      for (const auto& layout : input.layouts) rendered.push_back(join(layout, results, align));
      joined.text = render_document(input.html, rendered);
    } else {
      joined.text = join(input.layouts.front(), results, align);
    }
    result.nbest.push_back(std::move(joined));
  }
  return out;
}

WordLinks align_translation(const TeacherForcing& pass, const std::string& source,
                            const TranslatedText& translation, const AttentionOptions& view) {
  WordLinks out;
  out.src_words = text_words(source, {0, source.size()});
  out.tgt_words = text_words(translation.text, {0, translation.text.size()});
  if (translation.tokens.empty() || out.src_words.empty() || out.tgt_words.empty()) return out;
  const auto mass = word_attention(attention_map(pass, source, translation.tokens, view));
  if (mass.empty()) return out;
  for (const auto& [s, t] : links_from_attention(mass)) {
    out.links.emplace_back(rescale(s, mass.front().size(), out.src_words.size()),
                           rescale(t, mass.size(), out.tgt_words.size()));
  }
  return out;
}

std::vector<TranslationResult> translate_text(Translator& translator,
                                              const std::vector<std::string>& inputs,
                                              const TextOptions& options, size_t first_line,
                                              size_t segments_per_pass) {
  const Tokenizer& tokenizer = translator.tokenizer();
  TextOptions text = options;
  if (!text.words) text.words = tokenizer.word_casing();
  if (text.max_pieces == 0) {
    text.max_pieces = segment_limit(translator.models(), translator.models().max_len(),
                                    translator.language_tags().on_source());
  }
  const TextPlan plan(
      inputs, text, [&](const std::string& s) { return tokenizer.encode_src(s).size(); },
      first_line);
  // At most segments_per_pass segments are decoded together, so a paragraph of any length is
  // translated in the memory of a bounded batch pool, not of the whole paragraph.
  std::vector<TranslationResult> results;
  const size_t pass = std::max<size_t>(1, segments_per_pass);
  for (size_t begin = 0; begin < plan.segments().size(); begin += pass) {
    const size_t end = std::min(plan.segments().size(), begin + pass);
    std::vector<SourceLine> lines;
    for (size_t k = begin; k < end; ++k) {
      lines.push_back(encode_line(tokenizer, translator.models(), plan.segments()[k],
                                  first_line + plan.input_of(k)));
    }
    for (auto& result : translator.translate_encoded(std::move(lines))) {
      results.push_back(std::move(result));
    }
  }
  const auto forced = translator.teacher_forcing();
  auto out = plan.assemble(results, [&](const std::string& source, const TranslatedText& hyp) {
    return align_translation(forced, source, hyp, options.view);
  });
  for (const auto& result : out) {
    if (result.error) translator.report("error: " + *result.error);
    if (result.warning) translator.report("warning: " + *result.warning);
  }
  return out;
}

TextOptions whole_line_options(const std::string& src_lang, const std::string& tgt_lang,
                               size_t max_pieces) {
  TextOptions text;
  text.split = SplitMode::kNone;
  text.casing = CasingMode::kNone;
  text.src_lang = src_lang;
  text.tgt_lang = tgt_lang;
  text.max_pieces = max_pieces;
  return text;
}

size_t segment_limit(const Ensemble& models, int64_t data_max_len, bool source_tags) {
  const int64_t positions = models.max_len() - 1 - (source_tags ? 1 : 0);
  return size_t(std::max<int64_t>(1, std::min(data_max_len, positions)));
}

}  // namespace nmt
