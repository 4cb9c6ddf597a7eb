#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/language_tags.h"
#include "data/tokenizer.h"
#include "decode/attention_map.h"
#include "decode/search.h"
#include "decode/searcher.h"
#include "model/seq2seq.h"

namespace nmt {

/// The outcome for one input line: its n-best translations, or an error for that line only.
struct TranslationResult {
  std::vector<TranslatedText> nbest;  ///< best first; one empty translation for an empty line
  std::optional<std::string> error;  ///< set when the line could not be translated (e.g. bad UTF-8)
  std::optional<std::string> warning;  ///< set when the line was translated with a caveat
  bool interrupted = false;            ///< not translated: the stop check said so first (set_stop)
  bool ok() const { return !error.has_value(); }
  /// The best translation's text ("" when there is none).
  const std::string& best() const;
};

/// One input line made ready for decoding: its source ids, and its result so far.
struct SourceLine {
  std::vector<int64_t> ids;  ///< source pieces without eos, cut to the model's limit
  OutputGuide guide;         ///< target prefix and constraints (none by default)
  std::string tgt_lang;      ///< target language of a multilingual model; "" = the translator's
  size_t line_number = 0;    ///< 1-based, for messages
  TranslationResult result;  ///< an error (invalid UTF-8), a warning (cut), or, for a blank
                             ///< line, its one empty translation
  /// Whether the model has to translate it (not failed, not blank).
  bool needs_model() const { return result.ok() && result.nbest.empty(); }
};

/// Checks and tokenizes `line` as Translator::translate does: invalid UTF-8 fails the line, a
/// blank line gets an empty translation, a line longer than `model` accepts is cut with a
/// warning. `line_number` (1-based) names the line in those messages. Tokenizer errors throw.
SourceLine encode_line(const Tokenizer& tokenizer, const Ensemble& models, const std::string& line,
                       size_t line_number);

/// A target prefix and constraint phrases as text -> target ids. An nmt::Error naming `what`
/// (e.g. "line 3") when a text is not valid UTF-8, a constraint is empty or blank, or a text
/// holds characters the target vocabulary lacks (they would decode as " ⁇ "), naming them.
OutputGuide encode_guide(const Tokenizer& tokenizer, const std::string& prefix,
                         const std::vector<std::string>& constraints, const std::string& what);

/// Checks `line`'s guide against its output limit under `config` (check_guide); a guide that
/// does not fit fails the line with that error. Blank and failed lines are left as they are.
void check_line_guide(SourceLine& line, const Ensemble& models, const DecodeConfig& config);

/// Text in, text out: tokenizes, decodes in token-budget batches (decode_all), detokenizes.
/// Lines are independent: an empty line gives an empty translation without a model call, a line
/// longer than the model accepts is truncated with a warning, invalid UTF-8 fails that line only.
/// An ensemble translates as one model (its members' log-probabilities averaged per step).
class Translator {
 public:
  /// The models are switched to eval() mode. (Tokenizer copies share their models: cheap.)
  Translator(Ensemble models, Tokenizer tokenizer, DecodeConfig config, at::Device device);

  /// Translates each line; `first_line` is the number of lines[0] in messages (1-based).
  /// `guides` (empty, or one per line, from encode_guide) give lines a target prefix and
  /// constraints; a guide that does not fit its line's output limit, or that has an error (its
  /// text could not be encoded), fails that line. A line
  /// whose constraints could not all be met within the limit gets a warning.
  std::vector<TranslationResult> translate(const std::vector<std::string>& lines,
                                           size_t first_line = 1,
                                           const std::vector<OutputGuide>& guides = {});
  /// Translates lines already made ready by encode_line (the server tokenizes each text once,
  /// when it arrives) with the decoding options `options` (the translator's own config when not
  /// given): one Translator serves requests whose options differ. Warnings and errors are not
  /// logged again.
  std::vector<TranslationResult> translate_encoded(std::vector<SourceLine> lines);
  std::vector<TranslationResult> translate_encoded(std::vector<SourceLine> lines,
                                                   const DecodeConfig& options);

  /// Best translation of each line; the first failed line is an nmt::Error naming it.
  std::vector<std::string> translate_texts(const std::vector<std::string>& lines);

  /// Where warnings (truncation) and per-line errors are also written; nullptr = nowhere.
  /// Defaults to std::cerr.
  void set_log(std::ostream* log) { log_ = log; }

  /// A check asked between decoding batches (e.g. nmt::interrupted): once it returns true,
  /// translate() returns at once and the lines not yet decoded come back `interrupted`.
  /// nullptr (the default): decode everything.
  void set_stop(StopCheck check) { stop_ = check; }
  /// A model of several target languages (data.lang_tag): its tags, and the target language of
  /// lines that do not name their own (SourceLine::tgt_lang; resolve it with resolve_pair
  /// first). Its tag goes before each source, or is forced as the first output token and left
  /// out of the output. Default: no tags.
  void set_language(LanguageTags tags, std::string tgt_lang);
  const LanguageTags& language_tags() const { return tags_; }
  const std::string& target_language() const { return tgt_lang_; }
  /// Batches decoded at once, each on its own thread (decode_all); 1 by default.
  void set_workers(int64_t workers) { workers_ = std::max<int64_t>(1, workers); }
  StopCheck stop() const { return stop_; }

  const DecodeConfig& config() const { return config_; }
  /// What attention maps and alignments of this translator's output need (decode/attention_map.h):
  /// its first model, tokenizer, device, language tags and target language.
  TeacherForcing teacher_forcing() const;
  /// The model, or an ensemble's first member (it answers attention and alignment).
  Seq2Seq model() const { return models_.front(); }
  const Ensemble& models() const { return models_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const at::Device& device() const { return device_; }
  /// Writes `message` to the log (set_log), if any.
  void report(const std::string& message) const;

 private:
  Ensemble models_;
  Tokenizer tokenizer_;
  DecodeConfig config_;
  at::Device device_;
  std::ostream* log_;
  StopCheck stop_ = nullptr;
  int64_t workers_ = 1;
  LanguageTags tags_;
  std::string tgt_lang_;
};

}  // namespace nmt
