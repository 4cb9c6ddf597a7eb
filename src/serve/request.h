#pragma once

// The JSON side of `nmt serve`: a POST /translate body -> TranslateRequest (every field checked,
// errors name the field and carry the HTTP status), and translation results -> the response body.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/error.h"
#include "decode/translator.h"
#include "text/document.h"

namespace nmt {

/// What one request may ask of the server. Beyond these a request is refused (413, or 400 for
/// the beam), so that no client can make the server decode for minutes or hold gigabytes.
struct ServeLimits {
  size_t max_body_bytes = size_t(1) << 20;  ///< request body (413 above)
  size_t max_text_bytes = 100000;           ///< one text (a paragraph, a document), bytes (413)
  size_t max_texts = 256;                   ///< texts in one request (413 above)
  int64_t max_beam = 32;                    ///< beam (and nbest) a request may ask for (400)
  int max_json_depth = 8;                   ///< nesting of arrays/objects in a body (400)
};

/// A request the server refuses: the HTTP status (400, 413, 503, ...) and a message that names
/// the field and says what would be valid.
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message, int retry_after_s = 0)
      : Error(message), status_(status), retry_after_s_(retry_after_s) {}
  int status() const { return status_; }
  /// Seconds the client should wait before it retries (a Retry-After header), 0: none said.
  int retry_after_s() const { return retry_after_s_; }

 private:
  int status_;
  int retry_after_s_;
};

/// Parses a request body as JSON, refusing nesting deeper than `max_depth` while it parses (a
/// body of a million '[' never reaches the DOM): a RequestError 400 saying what is wrong.
nlohmann::json parse_json_body(const std::string& body, int max_depth);

/// A checked POST /translate request.
struct TranslateRequest {
  std::vector<std::string> texts;  ///< "text": one string or a list of strings
  DecodeConfig decode;             ///< the server's defaults with the request's options applied
  bool scores = false;             ///< "scores": true, or nbest > 1: objects with scores
  bool alignment = false;          ///< "alignment": true: objects with "alignment" (Pharaoh)
  /// "prefix": the target text each translation starts with (empty: none), one per text.
  std::vector<std::string> prefixes;
  /// "constraints": the target phrases each translation must contain, one list per text.
  std::vector<std::vector<std::string>> constraints;
  /// "tgt_lang": the target language of a model trained on several pairs ("" = the server's
  /// default, serve --tgt-lang, or the model's only one).
  std::string tgt_lang;
  /// "split", "format", "casing": how texts become segments (text/document.h), over the
  /// server's defaults. Unset when the request asks for what works on whole texts only
  /// (alignment, prefix, constraints, nbest > 1): each text is then one segment, cut at the
  /// model's limit with a warning.
  std::optional<TextOptions> text;
};

/// Parses and checks a body: {"text": "..." | ["...", ...], "beam": N, "nbest": K,
/// "length_penalty": A, "max_len_offset": N, "scores": bool, "alignment": bool, "prefix": P,
/// "constraints": C, "tgt_lang": L, "split": "sentences" | "none", "format": "text" | "html",
/// "casing": "auto" | "none"}. `text` holds the server's defaults for the last three. With one
/// "text" string, P is a string and C a list of strings; with a list of texts, P is a list of
/// strings and C a list of such lists, one entry per text. Options override `defaults` as the
/// command line's do (DecodeConfig::complete) and pass the
/// same validation (DecodeConfig::validate) as `nmt translate`'s. Throws RequestError: 400 for
/// malformed JSON, unknown fields, wrong types, invalid UTF-8, out-of-range options; 413 for a text
/// or list above the limits.
TranslateRequest parse_translate_request(const std::string& body, const DecodeConfig& defaults,
                                         const ServeLimits& limits, const TextOptions& text = {});

/// A checked POST /attention request: the cross-attention of one text's translation.
struct AttentionRequest {
  std::string text;       ///< "text": one string
  AttentionOptions view;  ///< "layer" (default -1: the last) and "head" (default -1: the mean)
  std::string tgt_lang;   ///< "tgt_lang": the target language (empty: the server's)
};

/// Parses {"text": "...", "layer": L, "head": H, "tgt_lang": "de"}; the indices are checked against
/// `model` (AttentionOptions::validate). Throws RequestError 400 (413 for a text above the limit).
AttentionRequest parse_attention_request(const std::string& body, const ModelConfig& model,
                                         const ServeLimits& limits);

/// A checked POST /score request: pairs whose targets the model scores (forced decoding).
struct ScoreRequest {
  std::vector<std::string> src;  ///< "src": a string or a list of strings
  std::vector<std::string> tgt;  ///< "tgt": as many as "src"
  std::string tgt_lang;          ///< "tgt_lang": as in TranslateRequest
};

/// Parses {"src": ... , "tgt": ..., "tgt_lang": L} (each side a string or a list, of the same
/// length); the limits apply to each side as to "text". Throws RequestError 400 (413 above the
/// limits).
ScoreRequest parse_score_request(const std::string& body, const ServeLimits& limits);

/// How the server tokenizes one text: encode_line over its model, with a 1-based line number.
using LineEncoder = std::function<SourceLine(const std::string& text, size_t line_number)>;

/// The request's texts, each tokenized once by `encode`. A text it cannot tokenize is a
/// RequestError 400 that names the text's index ("text[2]") and the tokenizer's message.
std::vector<SourceLine> encode_texts(const std::vector<std::string>& texts,
                                     const LineEncoder& encode);

/// {"translations": [...]} for `results` (one per text): plain strings, or with scores / n-best
/// objects {"text", "score", "nbest": [{"text", "score"}, ...]}; "warnings" lists the texts that
/// were truncated ({"index", "message"}), "errors" any that failed.
/// With "alignment", `alignments[i][k]` is the Pharaoh alignment of text i's k-th hypothesis.
nlohmann::json translation_response(const std::vector<TranslationResult>& results,
                                    const TranslateRequest& request,
                                    const std::vector<std::vector<std::string>>& alignments = {});

/// {"error": message}
std::string error_body(const std::string& message);

}  // namespace nmt
