#pragma once

// Text in, text out: an input line may hold a paragraph, a long line, or an HTML document. A
// TextPlan cuts the inputs into the segments the model translates (sentences by ICU, too-long
// sentences into parts that fit, HTML blocks; ALL CAPS and Title Case sentences in sentence
// case) and puts their translations back together: the source's own whitespace between them, a
// paragraph one output line, an empty line empty, HTML tags around the words they wrapped.
// `nmt translate` and `nmt serve` use it the same way: segments(), then their translations
// (in the normal token-budget batches), then assemble().

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "decode/translator.h"
#include "text/casing.h"
#include "text/chunking.h"
#include "text/html.h"
#include "text/markup.h"

namespace nmt {

enum class SplitMode { kSentences, kNone };  ///< sentences | none
enum class TextFormat { kText, kHtml };      ///< text | html
enum class CasingMode { kAuto, kNone };      ///< auto | none

template <>
struct ChoiceNames<SplitMode> {
  static constexpr std::pair<SplitMode, const char*> names[] = {
      {SplitMode::kSentences, "sentences"}, {SplitMode::kNone, "none"}};
};
template <>
struct ChoiceNames<TextFormat> {
  static constexpr std::pair<TextFormat, const char*> names[] = {{TextFormat::kText, "text"},
                                                                 {TextFormat::kHtml, "html"}};
};
template <>
struct ChoiceNames<CasingMode> {
  static constexpr std::pair<CasingMode, const char*> names[] = {{CasingMode::kAuto, "auto"},
                                                                 {CasingMode::kNone, "none"}};
};

/// How inputs become segments.
struct TextOptions {
  /// sentences: ICU's sentence splitting for src_lang | none: a line (an HTML block) is one
  /// segment unless it is too long
  SplitMode split = SplitMode::kSentences;
  TextFormat format = TextFormat::kText;  ///< text | html (each input one document)
  /// auto: an ALL CAPS or Title Case sentence is translated in sentence case (an ALL CAPS one's
  /// translation upper-cased again) | none: as written
  CasingMode casing = CasingMode::kAuto;
  std::string src_lang = "en";  ///< the sentence rules, and case mappings of the source
  std::string tgt_lang = "de";  ///< case mappings of the translation
  /// What the model's training sources say about casing (the checkpoint's tokenizer): with it,
  /// ALL CAPS and Title Case sentences get each word's usual form, and `split` sentences also
  /// ends a sentence where the writer left the boundary unpunctuated (split_run_ons). Null:
  /// plain sentence case, and only ICU's boundaries.
  std::shared_ptr<const WordCasing> words;
  /// The longest segment, in source pieces: a longer sentence is split again (chunking.h).
  /// 0: the model's limit (translate_text, the server: segment_limit), no limit in a TextPlan.
  size_t max_pieces = 0;
  /// The cross-attention whose word alignment places HTML tags.
  AttentionOptions view{-2, -1};
};

/// What a segment's translation comes back as: its text, and for a segment with tags its word
/// links (source words of the segment's source, target words of its translation).
using SegmentAligner =
    std::function<WordLinks(const std::string& source, const TranslatedText& translation)>;

/// The segments of a batch of inputs, and how to reassemble them.
class TextPlan {
 public:
  /// `first_line` numbers inputs[0] in messages (1-based); `count` gives the source pieces of a
  /// text (Tokenizer::encode_src's size).
  TextPlan(const std::vector<std::string>& inputs, const TextOptions& options,
           const PieceCounter& count, size_t first_line = 1);

  /// The segments' texts, as the model reads them, in order.
  const std::vector<std::string>& segments() const { return sources_; }
  /// The input each segment belongs to (an index into the inputs).
  size_t input_of(size_t segment) const { return owner_[segment]; }
  /// Whether a segment carries tags (its translation needs a word alignment).
  bool needs_alignment(size_t segment) const { return tagged_[segment]; }

  /// One result per input from one result per segment (Translator's, in segments() order):
  /// the best translations joined, warnings and errors carried over (an input whose segment
  /// failed fails; one whose segment was interrupted is interrupted). `align` is called for the
  /// segments that need_alignment.
  std::vector<TranslationResult> assemble(const std::vector<TranslationResult>& results,
                                          const SegmentAligner& align) const;

 private:
  struct Placed {  ///< a segment within its text
    size_t segment = 0;
    TextSpan span;  ///< bytes of the text it came from
    SourceCasing casing = SourceCasing::kAsWritten;
  };
  struct Layout {  ///< a text (a paragraph, an HTML block) cut into segments
    std::string text;
    std::vector<Placed> placed;
    const TextBlock* block = nullptr;  ///< its inline tags (HTML), or none
  };
  struct Input {
    std::vector<Layout> layouts;  ///< one for text; one per block for HTML
    HtmlDocument html;
    TranslationResult early;  ///< blank or invalid: the result, without the model
    bool done_early = false;
    std::vector<std::string> warnings;
  };

  void add_text(Input& input, size_t index, const std::string& text, const TextBlock* block);
  std::string join(const Layout& layout, const std::vector<TranslationResult>& results,
                   const SegmentAligner& align) const;

  TextOptions options_;
  PieceCounter count_;
  size_t first_line_;
  std::vector<Input> inputs_;
  std::vector<std::string> sources_;
  std::vector<size_t> owner_;
  std::vector<bool> tagged_;
};

/// The word links of `source` translated as `translation`, from the cross-attention of a
/// teacher-forced pass (the view's layer and head), mapped onto the whitespace-separated words
/// of both texts.
WordLinks align_translation(const TeacherForcing& pass, const std::string& source,
                            const TranslatedText& translation, const AttentionOptions& view);

/// The most segments translate_text decodes in one Translator::translate_encoded call.
inline constexpr size_t kSegmentsPerPass = 512;

/// A Translator that takes text: TextPlan, then Translator::translate_encoded (kSegmentsPerPass
/// segments at a time), then assemble.
/// Warnings and errors go to the translator's log with the input's line number.
std::vector<TranslationResult> translate_text(Translator& translator,
                                              const std::vector<std::string>& inputs,
                                              const TextOptions& options, size_t first_line = 1,
                                              size_t segments_per_pass = kSegmentsPerPass);

/// How `nmt evaluate` and training's validation translate a test line: as one segment, as
/// written (no sentence splitting, no casing), split only where it is longer than `max_pieces`
/// source pieces (0: the model's limit), at clause punctuation, then between words
/// (chunking.h), so that no part of it is cut.
TextOptions whole_line_options(const std::string& src_lang, const std::string& tgt_lang,
                               size_t max_pieces);

/// The options' segment limit for `models`: data.max_len (what training kept), within the
/// model's positions (model.max_len - 1 for eos, - 1 for a language tag).
size_t segment_limit(const Ensemble& models, int64_t data_max_len, bool source_tags);

}  // namespace nmt
