// nmt translate: argv -> DecodeConfig -> Translator. Text comes from the arguments, a file or
// stdin (line by line, in chunks, output flushed per chunk; interactive on a terminal).
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "decode/alignment.h"
#include "decode/attention_svg.h"
#include "decode/translator.h"
#include "text/document.h"

namespace nmt::cli {
namespace {

constexpr size_t kMaxChunkLines = 512;

/// How lines become translations: as text (text/document.h: paragraphs split into sentences,
/// casing, nothing cut, HTML) or, for the features that work on a whole line (n-best lists,
/// alignments, prefixes, constraints), line by line as Translator::translate does.
struct LineTranslation {
  Translator* translator = nullptr;
  std::optional<TextOptions> text;  ///< empty: line by line

  std::vector<TranslationResult> operator()(const std::vector<std::string>& lines, size_t first,
                                            const std::vector<OutputGuide>& guides) const {
    if (text) return translate_text(*translator, lines, *text, first);
    return translator->translate(lines, first, guides);
  }
  StopCheck stop() const { return translator->stop(); }
};

/// Where translations go and how they are written.
struct OutputFormat {
  std::ostream* out = &std::cout;
  int64_t nbest = 1;  ///< > 1: exactly nbest lines "score<TAB>text" per input
  /// --alignment: each translation is followed by "<TAB>" and its Pharaoh word alignment,
  /// from the cross-attention of a teacher-forced pass as `view` chooses it
  std::optional<TeacherForcing> aligner;
  AttentionOptions view;
};

/// "<TAB>i-j ..." for `translation` of `source` under --alignment, else "".
std::string alignment_suffix(const OutputFormat& format, const std::string& source,
                             const TranslatedText* translation) {
  if (!format.aligner) return "";
  if (translation == nullptr || translation->tokens.empty()) return "\t";
  return "\t" + pharaoh(align_words(
                    attention_map(*format.aligner, source, translation->tokens, format.view)));
}

/// Writes one input's translations; failed lines give empty output lines (alignment is kept).
void write_result(const TranslationResult& result, const OutputFormat& format,
                  const std::string& source) {
  if (format.nbest <= 1) {
    *format.out << result.best()
                << alignment_suffix(format, source,
                                    result.nbest.empty() ? nullptr : &result.nbest.front())
                << '\n';
    return;
  }
  for (int64_t i = 0; i < format.nbest; ++i) {
    const auto index = static_cast<size_t>(i);
    if (index < result.nbest.size()) {
      char score[32];
      std::snprintf(score, sizeof score, "%.4f", result.nbest[index].score);
      *format.out << score << '\t' << result.nbest[index].text
                  << alignment_suffix(format, source, &result.nbest[index]) << '\n';
    } else {
      *format.out << "-inf\t" << alignment_suffix(format, source, nullptr)
                  << '\n';  // fewer hypotheses (empty or failed input)
    }
  }
}

/// --prefix, --prefix-column and --constraints: the prefix and constraints of each input line,
/// read alongside it. Problems with them are one nmt::Error naming the option, file and line.
class GuideReader {
  /// The constraints file ran out before the input: the whole run's error, not one line's.
  struct MissingLine : Error {
    using Error::Error;
  };

 public:
  GuideReader(const cxxopts::ParseResult& args, const Tokenizer& tokenizer)
      : tokenizer_(tokenizer), column_(args.count("prefix-column") > 0) {
    if (args.count("prefix")) prefix_ = args["prefix"].as<std::string>();
    if (column_ && prefix_) throw Error("--prefix and --prefix-column exclude each other");
    if (args.count("constraints")) {
      constraints_path_ = args["constraints"].as<std::string>();
      constraints_ = std::make_unique<std::ifstream>(constraints_path_, std::ios::binary);
      if (!*constraints_) {
        throw Error("cannot read --constraints " + constraints_path_ + " (missing or unreadable)");
      }
    }
  }

  bool active() const { return column_ || prefix_ || constraints_; }

  /// The guides of `lines` (input lines first_line, first_line + 1, ...); --prefix-column
  /// strips each line's "<TAB>prefix" in place.
  std::vector<OutputGuide> read(std::vector<std::string>& lines, size_t first_line) {
    std::vector<OutputGuide> guides;
    if (!active()) return guides;
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto what = "line " + std::to_string(first_line + i);
      std::string prefix = prefix_.value_or("");
      if (column_) {
        const size_t tab = lines[i].find('\t');
        if (tab != std::string::npos) {
          prefix = lines[i].substr(tab + 1);
          lines[i].resize(tab);
        }
      }
      // A prefix or constraints line that cannot be used fails its line only.
      try {
        const auto named =
            constraints_ ? what + " (--constraints " + constraints_path_ + ")" : what;
        guides.push_back(encode_guide(tokenizer_, prefix, next_constraints(first_line + i), named));
      } catch (const MissingLine&) {
        throw;
      } catch (const Error& e) {
        guides.emplace_back();
        guides.back().error = e.what();
      }
    }
    lines_read_ = first_line + lines.size() - 1;
    return guides;
  }

  /// After the last input line: more lines in --constraints than in the input would mean
  /// they were paired with the wrong lines; an nmt::Error naming the first extra one.
  void finish() {
    if (!constraints_) return;
    std::string line;
    for (size_t number = lines_read_ + 1; std::getline(*constraints_, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw Error("--constraints " + constraints_path_ + " line " + std::to_string(number) +
                  ": more lines than the input (" + std::to_string(lines_read_) +
                  "); line i of the file goes with input line i");
    }
  }

 private:
  /// The next line of --constraints: a JSON list of target phrases (strings).
  std::vector<std::string> next_constraints(size_t input_line) {
    if (!constraints_) return {};
    std::string line;
    const auto where = "--constraints " + constraints_path_ + " line " + std::to_string(input_line);
    if (!std::getline(*constraints_, line)) {
      throw MissingLine(where +
                        ": missing; the file needs one JSON list of target phrases per input "
                        "line ([] for none)");
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(where + ": not JSON (" + e.what() + "); write a list such as [\"Hund\"]");
    }
    if (!value.is_array()) {
      throw Error(where + ": " + value.dump() + " is not a list; write a list such as [\"Hund\"]");
    }
    std::vector<std::string> phrases;
    for (const auto& item : value) {
      if (!item.is_string()) {
        throw Error(where + ": " + item.dump() + " is not a string; each constraint is a phrase");
      }
      phrases.push_back(item.get<std::string>());
    }
    return phrases;
  }

  const Tokenizer& tokenizer_;
  size_t lines_read_ = 0;
  bool column_;
  std::optional<std::string> prefix_;
  std::string constraints_path_;
  std::unique_ptr<std::ifstream> constraints_;
};

/// True if more input can be read from `fd` without blocking (-1: a file, always true).
bool input_ready(std::istream& in, int fd) {
  if (fd < 0 || in.rdbuf()->in_avail() > 0) return true;
  pollfd poll_fd{fd, POLLIN, 0};
  return ::poll(&poll_fd, 1, 0) > 0;
}

/// Lines that failed; `interrupted`: Ctrl-C/SIGTERM stopped the input early after `written`
/// lines (--input only).
struct StreamOutcome {
  size_t failed = 0;
  size_t written = 0;
  bool interrupted = false;
};

/// Translates `in` line by line, batching the lines already available (up to kMaxChunkLines) so
/// a pipe or file is decoded in batches while a line-at-a-time writer gets each answer at once.
/// When the translator's stop check fires, the lines translated so far (the first ones, in
/// order) are written and nothing more is read.
StreamOutcome translate_stream(const LineTranslation& translate, std::istream& in, int fd,
                               const OutputFormat& format, GuideReader& guides) {
  StreamOutcome outcome;
  size_t line_number = 1;
  std::vector<std::string> chunk;
  std::string line;
  while (!outcome.interrupted && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    chunk.push_back(std::move(line));
    if (chunk.size() < kMaxChunkLines && input_ready(in, fd) && in.peek() != EOF) continue;
    const auto chunk_guides = guides.read(chunk, line_number);
    const auto results = translate(chunk, line_number, chunk_guides);
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].interrupted) break;
      outcome.failed += results[i].ok() ? 0 : 1;
      outcome.written += 1;
      write_result(results[i], format, chunk[i]);
    }
    format.out->flush();
    line_number += chunk.size();
    chunk.clear();
    outcome.interrupted = translate.stop() != nullptr && translate.stop()();
  }
  return outcome;
}

/// The interactive loop on a terminal: prompt, translate each line as entered.
size_t interactive(const LineTranslation& translate, const OutputFormat& format,
                   GuideReader& guides) {
  std::cerr << "nmt translate: type a sentence and press Enter (Ctrl-D to quit)\n";
  size_t failed = 0, line_number = 1;
  std::string line;
  while ((std::cerr << "> " << std::flush) && std::getline(std::cin, line)) {
    std::vector<std::string> lines = {line};
    const auto line_guides = guides.read(lines, line_number);
    const auto results = translate(lines, line_number++, line_guides);
    line = lines[0];
    failed += results[0].ok() ? 0 : 1;
    write_result(results[0], format, line);
    format.out->flush();
  }
  std::cerr << '\n';
  return failed;
}

/// --layer and --head, checked against the model before anything is translated.
AttentionOptions attention_options(const cxxopts::ParseResult& args, const ModelConfig& model) {
  AttentionOptions options{args["layer"].as<int64_t>(), args["head"].as<int64_t>()};
  options.validate(model);
  return options;
}

/// Writes the attention heat map of `source`'s best translation.
void write_attention(Translator& translator, const std::string& source,
                     const AttentionOptions& options, const std::string& path) {
  const auto results = translator.translate({source});
  if (!results[0].ok()) throw Error("--attention: " + *results[0].error);
  if (results[0].nbest.empty() || results[0].nbest[0].tokens.empty()) {
    throw Error("--attention: the first input is empty or has an empty translation");
  }
  write_svg(path, attention_svg(attention_map(translator.teacher_forcing(), source,
                                              results[0].nbest[0].tokens, options)));
  std::cerr << "attention (layer " << options.layer << ", head "
            << (options.head == -1 ? std::string("mean") : std::to_string(options.head))
            << ") written to " << path << "\n";
}

/// Lines that failed, and the first input (for --attention).
struct InputOutcome {
  size_t failed = 0;
  std::optional<StreamOutcome> stream;  ///< --input: how far it got
  std::optional<std::string> first_input;
};

/// The whole of `in`.
std::string read_all(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// --format html: each TEXT argument, the --input file or stdin is one document, translated
/// whole and written as it came (TEXT arguments one per line).
InputOutcome translate_documents(const LineTranslation& translate, const cxxopts::ParseResult& args,
                                 const OutputFormat& format) {
  if (args.count("attention")) throw Error("--attention needs --format text");
  std::vector<std::string> documents;
  const bool texts = args.count("text") > 0;
  if (texts) {
    documents = args["text"].as<std::vector<std::string>>();
  } else if (args.count("input")) {
    const auto path = args["input"].as<std::string>();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read --input " + path + " (missing or unreadable)");
    documents.push_back(read_all(in));
    install_interrupt_handlers();  // Ctrl-C / SIGTERM: stop within a batch, write nothing
    translate.translator->set_stop(&interrupted);
  } else {
    documents.push_back(read_all(std::cin));
  }
  InputOutcome outcome;
  const auto results = translate(documents, 1, {});
  for (const auto& result : results) {
    if (result.interrupted) {
      outcome.stream = StreamOutcome{outcome.failed, 0, true};
      return outcome;
    }
    outcome.failed += result.ok() ? 0 : 1;
    *format.out << result.best() << (texts ? "\n" : "");
  }
  return outcome;
}

/// Translates TEXT arguments, --input FILE, or stdin (interactive on a terminal).
InputOutcome translate_inputs(const LineTranslation& translate, const cxxopts::ParseResult& args,
                              const OutputFormat& format) {
  if (translate.text && translate.text->format == TextFormat::kHtml) {
    return translate_documents(translate, args, format);
  }
  Translator& translator = *translate.translator;
  InputOutcome outcome;
  GuideReader guides(args, translator.tokenizer());
  if (args.count("text")) {
    auto texts = args["text"].as<std::vector<std::string>>();
    const auto text_guides = guides.read(texts, 1);
    const auto results = translate(texts, 1, text_guides);
    for (size_t i = 0; i < results.size(); ++i) {
      outcome.failed += results[i].ok() ? 0 : 1;
      write_result(results[i], format, texts[i]);
    }
    guides.finish();
    outcome.first_input = texts.front();
  } else if (args.count("input")) {
    const auto path = args["input"].as<std::string>();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read --input " + path + " (missing or unreadable)");
    install_interrupt_handlers();  // Ctrl-C / SIGTERM: write what is done, then stop
    translator.set_stop(&interrupted);
    outcome.stream = translate_stream(translate, in, -1, format, guides);
    outcome.failed = outcome.stream->failed;
    if (outcome.stream->interrupted) return outcome;
    guides.finish();
    std::ifstream again(path, std::ios::binary);
    outcome.first_input.emplace();
    std::getline(again, *outcome.first_input);
    if (args.count("prefix-column")) {  // the source, as it was translated
      *outcome.first_input = outcome.first_input->substr(0, outcome.first_input->find('\t'));
    }
  } else if (::isatty(STDIN_FILENO)) {
    outcome.failed = interactive(translate, format, guides);
  } else {
    if (args.count("attention")) throw Error("--attention needs TEXT or --input, not stdin");
    outcome.failed = translate_stream(translate, std::cin, STDIN_FILENO, format, guides).failed;
    guides.finish();
  }
  return outcome;
}

/// Text or line by line: the features that work on whole lines need the latter, and refuse
/// --format html and an explicit --split sentences.
LineTranslation line_translation(const cxxopts::ParseResult& args, DecodeSession& session,
                                 const OutputFormat& format) {
  LineTranslation translate{session.translator.get(), text_options_from_args(args, session)};
  std::string per_line;
  for (const char* option : {"alignment", "prefix", "prefix-column", "constraints"}) {
    if (args.count(option) && per_line.empty()) per_line = std::string("--") + option;
  }
  if (format.nbest > 1 && per_line.empty()) per_line = "--nbest " + std::to_string(format.nbest);
  if (per_line.empty()) return translate;
  if (translate.text->format == TextFormat::kHtml) {
    throw Error("--format html translates documents; " + per_line +
                " works on plain lines (--format text)");
  }
  if (args.count("split") && translate.text->split == SplitMode::kSentences) {
    throw Error("--split sentences translates sentence by sentence; " + per_line +
                " works on whole lines: use --split none");
  }
  translate.text.reset();
  return translate;
}

void add_translate_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("input/output")
      ("input", "read sentences from FILE (one per line) instead of stdin",
       cxxopts::value<std::string>(), "FILE")
      ("output", "write translations to FILE instead of stdout", cxxopts::value<std::string>(),
       "FILE")
      ("attention", "write the cross-attention heat map of the first input's best translation "
       "to FILE.svg", cxxopts::value<std::string>(), "FILE")
      ("alignment", "follow each translation with a TAB and its word alignment in Pharaoh "
       "format (source-target word pairs i-j, from cross-attention as --layer and --head choose)")
      ("layer", "decoder layer for --attention and --alignment (negative counts from the end)",
       cxxopts::value<int64_t>()->default_value("-1"), "L")
      ("head", "attention head for --attention and --alignment (-1: mean over heads)",
       cxxopts::value<int64_t>()->default_value("-1"), "H")
      ("text", "sentences to translate", cxxopts::value<std::vector<std::string>>());
  options.add_options("prefix and constraints")
      ("prefix", "every translation starts with TEXT (target language); decoding continues "
       "from it", cxxopts::value<std::string>(), "TEXT")
      ("prefix-column", "each input line is SOURCE<TAB>PREFIX: its translation starts with "
       "PREFIX (a line without a TAB has none)")
      ("constraints", "FILE has one JSON list of target phrases per input line, e.g. "
       "[\"Hund\", \"im Schnee\"] ([] for none): each phrase appears in the translation "
       "(constrained beam search with dynamic beam allocation; a beam of at least the number "
       "of constraint pieces + 1 works best)", cxxopts::value<std::string>(), "FILE");
  // clang-format on
  options.parse_positional({"text"});
  options.positional_help("[TEXT ...]");
}

int run_translate(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Translate text with a trained model. One line out per input line: TEXT arguments, "
      "--input FILE or stdin (line by line; a line may hold a paragraph, translated sentence by "
      "sentence and joined with its own whitespace; empty lines stay empty; interactive on a "
      "terminal). With --format html the input is one HTML document, written back translated.\n"
      "--nbest, --alignment, --prefix and --constraints translate each line whole (--split "
      "none, and a line longer than the model reads is cut, with a warning).\n"
      "With --nbest K every input gives exactly K lines \"score<TAB>text\", best first (scores "
      "are length-penalised log-probabilities (--sample N: the samples' log-probabilities, "
      "distinct samples only), or with --mbr N the expected sentence BLEU/chrF against the "
      "beam's N best (or all samples); missing hypotheses print as \"-inf<TAB>\").\n"
      "Lines that cannot be translated (invalid UTF-8) are reported on stderr with their line "
      "number, give an empty output line, and make the exit status 1.\n"
      "Ctrl-C or SIGTERM during --input stops within a batch: the lines translated so far are "
      "written, and the exit status is 130.\n\n"
      "  nmt translate --checkpoint checkpoints/multi30k_en_de \"A dog runs.\"\n"
      "  nmt translate --checkpoint run/best.pt --beam 5 < test.en > hyp.de\n"
      "  nmt translate --checkpoint run --format html --input page.html --output page.de.html\n");
  std::ios::sync_with_stdio(false);  // std::cin buffers itself, so in_avail() sees whole chunks
  add_decode_options(options);
  add_workers_option(options, "model");
  add_translate_options(options);
  add_text_options(options);
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  auto session = open_decode_session(args);
  require_pair(session);  // a model of several target languages needs --tgt-lang
  Translator& translator = *session.translator;
  translator.set_workers(decoding_workers(args, session.device));
  std::optional<AttentionOptions> attention;
  if (args.count("attention")) attention = attention_options(args, translator.model()->config());
  std::unique_ptr<std::ofstream> file_out;
  OutputFormat format;
  format.nbest = translator.config().nbest;
  if (args.count("alignment")) {
    format.aligner = translator.teacher_forcing();
    format.view = attention_options(args, translator.model()->config());
  }
  if (args.count("output")) {
    const auto path = args["output"].as<std::string>();
    file_out = std::make_unique<std::ofstream>(path, std::ios::binary);
    if (!*file_out) throw Error("cannot write --output " + path);
    format.out = file_out.get();
  }
  const auto [failed, stream, first_input] =
      translate_inputs(line_translation(args, session, format), args, format);
  format.out->flush();
  if (stream && stream->interrupted) {
    std::cerr << "interrupted: the first " << stream->written
              << " line(s) were translated and written; the rest of "
              << args["input"].as<std::string>() << " was not read\n";
    return 130;
  }
  if (attention && first_input) {
    write_attention(translator, *first_input, *attention, args["attention"].as<std::string>());
  }
  if (failed > 0) std::cerr << failed << " line(s) could not be translated (see above)\n";
  return failed > 0 ? 1 : 0;
}

const bool registered_translate = register_command(
    {"translate", "translate text, a file or stdin with a checkpoint", run_translate, 40});

}  // namespace
}  // namespace nmt::cli
