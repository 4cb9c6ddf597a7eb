#include "serve/server.h"

#include "core/error.h"
#include "core/languages.h"

#if NMT_HAVE_HTTP

#include <chrono>
#include <csignal>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "decode/alignment.h"
#include "decode/attention_svg.h"
#include "decode/evaluation.h"
#include "nmt/page.h"
#include "serve/http_server.h"
#include "serve/metrics.h"

namespace nmt {

namespace {

using json = nlohmann::json;

/// The model's language pairs for /info: ["en-de", "en-fr"].
json pair_names(const DataConfig& data) {
  json names = json::array();
  for (const auto& pair : trained_pairs(data)) names.push_back(pair.name());
  return names;
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// A JSON error response; a 503 or 429 says when to retry, a 401 how to authenticate.
HttpResponse error_response(int status, const std::string& message, int retry_after_s = 0) {
  HttpResponse res;
  res.status = status;
  res.body = error_body(message);
  if (status == 503 && retry_after_s == 0) retry_after_s = 1;
  if (retry_after_s > 0) res.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  if (status == 401) res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

HttpResponse error_response(const RequestError& e) {
  return error_response(e.status(), e.what(), e.retry_after_s());
}

HttpResponse json_response(const json& value, int64_t texts = 0) {
  HttpResponse res;
  res.body = dump(value);
  res.texts = texts;
  return res;
}

/// The one method a known route answers, or nullptr for an unknown route.
const char* allowed_method(const std::string& path) {
  if (path == "/translate" || path == "/attention" || path == "/score") return "POST";
  if (path == "/" || path == "/health" || path == "/info" || path == "/metrics") return "GET";
  return nullptr;
}

/// The metrics' route label: a known route, else "other" (a client never makes a label).
std::string route_label(const std::string& path) {
  return allowed_method(path) != nullptr ? path : "other";
}

/// Characters (code points) of the texts a request carries, for the per-key budgets.
int64_t characters(const std::vector<std::string>& texts) {
  int64_t count = 0;
  for (const auto& text : texts) {
    for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }
  return count;
}

/// The page may load nothing from elsewhere and be framed by no other site.
HttpResponse page() {
  HttpResponse res;
  res.content_type = "text/html; charset=utf-8";
  res.body = kPageHtml;
  res.headers = {{"Content-Security-Policy",
                  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                  "img-src blob:; connect-src 'self'; frame-ancestors 'none'"},
                 {"X-Content-Type-Options", "nosniff"}};
  return res;
}

HttpOptions http_options(const ServeOptions& options) {
  HttpOptions http;
  http.host = options.host;
  http.port = options.port;
  http.handler_threads = options.http_threads;
  http.header_timeout = std::chrono::seconds(options.header_timeout_s);
  http.body_timeout = std::chrono::seconds(options.body_timeout_s);
  http.write_timeout = std::chrono::seconds(options.body_timeout_s);
  http.keep_alive = std::chrono::seconds(options.keep_alive_s);
  http.keep_alive_requests = options.keep_alive_requests;
  http.max_body_bytes = options.limits.max_body_bytes;
  http.max_connections = options.max_connections;
  http.max_client_connections = options.max_client_connections;
  http.tls_cert = options.tls_cert;
  http.tls_key = options.tls_key;
  return http;
}

}  // namespace

void require_http_server() {}

struct TranslationServer::Impl {
  Impl(ServedModel served_model, ServeOptions serve_options)
      : served(std::move(served_model)),
        options(std::move(serve_options)),
        access(options.access),
        queue(served.model, served.tokenizer, served.device, batching()),
        http(http_options(options), handlers()) {
    if (!options.text.words) options.text.words = served.tokenizer.word_casing();
    if (options.text.max_pieces == 0) {
      options.text.max_pieces = segment_limit(served.model, served.config.data.max_len,
                                              served.config.data.lang_tag == LangTag::kSource);
    }
  }

  /// The batching options with the served model's language tags and the metrics' hook.
  BatchOptions batching() {
    auto batch = options.batching;
    batch.tags = LanguageTags(served.config.data, served.tokenizer);
    batch.on_batch = [this](int64_t texts, double seconds) { metrics.batch(texts, seconds); };
    return batch;
  }
  HttpHandlers handlers();
  /// A request from its headers: routing errors, the GET routes, and the caller's key and
  /// request budget when the headers show them.
  std::optional<HttpResponse> from_headers(const HttpRequest& req);
  /// A whole POST request.
  HttpResponse handle(const HttpRequest& req);
  /// Who sent the request (its key, or its address without keys), with one request charged.
  Caller admit(const HttpRequest& req, const std::string& body);
  HttpResponse translate(const std::string& body, const Caller& caller);
  HttpResponse attention(const std::string& body, const Caller& caller);
  HttpResponse score(const std::string& body, const Caller& caller);
  /// Each text's "prefix" and "constraints" (encode_guide, check_guide): a RequestError 400
  /// naming the text when one cannot be encoded or does not fit its output.
  void add_guides(std::vector<SourceLine>& lines, const TranslateRequest& request) const;
  /// The request's texts as text (TextPlan): their segments decoded in the queue, joined back.
  std::vector<TranslationResult> translate_texts(const TranslateRequest& request,
                                                 const std::string& tgt_lang,
                                                 const LineEncoder& encode,
                                                 const TeacherForcing& forced);
  json info() const;
  json health() const;
  /// Encodes a request's texts for `tgt_lang` (a text's number names it in errors).
  LineEncoder encoder(const std::string& tgt_lang) const {
    return [this, tgt_lang](const std::string& text, size_t number) {
      auto line = encode_line(served.tokenizer, served.model, text, number);
      line.tgt_lang = tgt_lang;
      return line;
    };
  }
  /// What teacher-forced passes into `tgt_lang` need (attention maps, alignments); they run on
  /// the calling thread: the model is only read.
  TeacherForcing teacher_forcing(const std::string& tgt_lang) const {
    return {served.model.front(), served.tokenizer, served.device,
            LanguageTags(served.config.data, served.tokenizer), tgt_lang};
  }
  /// The target language of a request: its "tgt_lang", else serve --tgt-lang, else the model's
  /// only one; a 400 naming the model's pairs when it was not trained for it or none is chosen.
  std::string target_of(const std::string& requested) const;

  ServedModel served;
  ServeOptions options;
  ServeMetrics metrics;
  AccessControl access;
  BatchQueue queue;
  HttpServer http;
};

HttpHandlers TranslationServer::Impl::handlers() {
  HttpHandlers handlers;
  handlers.headers = [this](const HttpRequest& req) { return from_headers(req); };
  handlers.handle = [this](const HttpRequest& req) { return handle(req); };
  handlers.error = [](int status, const std::string& message) {
    return error_response(status, message);
  };
  handlers.sent = [this](const HttpRequest& req, const HttpResponse& res) {
    if (res.status == 401) metrics.rejected("key");
    if (res.status == 429) metrics.rejected("rate");
    metrics.answered(route_label(req.path), res.status, res.texts);
  };
  handlers.rejected = [this](Rejection reason) { metrics.rejected(rejection_name(reason)); };
  return handlers;
}

std::optional<HttpResponse> TranslationServer::Impl::from_headers(const HttpRequest& req) {
  const char* allowed = allowed_method(req.path);
  if (allowed == nullptr) {
    return error_response(404, "no route " + req.path +
                                   " (routes: GET /, POST /translate, POST /score, POST "
                                   "/attention, GET /health, GET /info, GET /metrics)");
  }
  const bool head = req.method == "HEAD" && std::string(allowed) == "GET";
  if (req.method != allowed && !head) {
    auto res =
        error_response(405, req.method + " " + req.path + " is not allowed (use " + allowed + ")");
    res.headers.emplace_back("Allow", allowed);
    return res;
  }
  if (req.path == "/health") return json_response(health());
  if (req.path == "/info") return json_response(info());
  if (req.path == "/") return page();
  if (req.path == "/metrics") {
    HttpResponse res;
    res.content_type = "text/plain; version=0.0.4; charset=utf-8";
    const auto stats = queue.stats();
    const auto load = http.load();
    res.body = metrics.text({stats.queued, stats.decoding, load.connections, load.busy});
    return res;
  }
  // A key in the headers, or none needed: the caller is known before the body is read.
  if (!access.keys_required() || !req.header("Authorization").empty()) {
    try {
      admit(req, "");
    } catch (const RequestError& e) {
      return error_response(e);
    }
  }
  return std::nullopt;
}

Caller TranslationServer::Impl::admit(const HttpRequest& req, const std::string& body) {
  const auto caller = access.identify(
      access.keys_required() ? presented_key(req.header("Authorization"), body) : "", req.client);
  access.charge_request(caller);
  return caller;
}

HttpResponse TranslationServer::Impl::handle(const HttpRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  HttpResponse res;
  try {
    // The key was in the body ("api_key"), or the caller was admitted from the headers.
    const bool from_body = access.keys_required() && req.header("Authorization").empty();
    const auto caller =
        from_body ? admit(req, req.body)
                  : access.identify(presented_key(req.header("Authorization"), ""), req.client);
    if (req.path == "/translate") {
      res = translate(req.body, caller);
    } else if (req.path == "/attention") {
      res = attention(req.body, caller);
    } else {
      res = score(req.body, caller);
    }
  } catch (const RequestError& e) {
    res = error_response(e);
  }
  metrics.latency(req.path,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return res;
}

void TranslationServer::Impl::add_guides(std::vector<SourceLine>& lines,
                                         const TranslateRequest& request) const {
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto what = "\"text[" + std::to_string(i) + "]\"";
    const std::string prefix = request.prefixes.empty() ? "" : request.prefixes[i];
    const auto& constraints =
        request.constraints.empty() ? std::vector<std::string>{} : request.constraints[i];
    try {
      lines[i].guide = encode_guide(served.tokenizer, prefix, constraints, what);
      if (lines[i].needs_model() && !lines[i].guide.empty()) {
        const auto limit = max_output_length(
            served.model, static_cast<int64_t>(lines[i].ids.size()), request.decode);
        check_guide(lines[i].guide, limit, request.decode, what);
      }
    } catch (const Error& e) {
      throw RequestError(400, e.what());
    }
  }
}

std::vector<TranslationResult> TranslationServer::Impl::translate_texts(
    const TranslateRequest& request, const std::string& tgt_lang, const LineEncoder& encode,
    const TeacherForcing& forced) {
  TextOptions text = *request.text;
  text.tgt_lang = tgt_lang;  // whose case mappings restore ALL CAPS
  const TextPlan plan(request.texts, text, [&](const std::string& segment) {
    return served.tokenizer.encode_src(segment).size();
  });
  std::vector<SourceLine> lines;
  for (size_t k = 0; k < plan.segments().size(); ++k) {
    try {
      lines.push_back(encode(plan.segments()[k], plan.input_of(k) + 1));
    } catch (const Error& e) {
      throw RequestError(400, "\"text[" + std::to_string(plan.input_of(k)) +
                                  "]\" cannot be tokenized: " + e.what());
    }
  }
  std::vector<TranslationResult> segments;
  // Every request goes through the queue, one of blank texts too (it counts what it answers).
  if (!request.texts.empty()) segments = queue.submit(std::move(lines), request.decode).get();
  return plan.assemble(segments, [&](const std::string& source, const TranslatedText& translation) {
    return align_translation(forced, source, translation, request.text->view);
  });
}

HttpResponse TranslationServer::Impl::translate(const std::string& body, const Caller& caller) {
  const auto& limits = options.limits;
  const auto request = parse_translate_request(body, served.config.decode, limits, options.text);
  access.charge_characters(caller, characters(request.texts));
  const std::string tgt_lang = target_of(request.tgt_lang);
  const auto encode = encoder(tgt_lang);
  // One teacher-forced pass per aligned hypothesis, on this thread (the model is only read).
  const auto forced = teacher_forcing(tgt_lang);
  std::vector<TranslationResult> results;
  std::vector<std::vector<std::string>> alignments;
  if (request.text) {
    results = translate_texts(request, tgt_lang, encode, forced);
  } else {
    auto lines = encode_texts(request.texts, encode);
    add_guides(lines, request);
    if (!lines.empty()) results = queue.submit(std::move(lines), request.decode).get();
  }
  if (request.alignment) {
    for (size_t i = 0; i < results.size(); ++i) {
      alignments.emplace_back();
      for (const auto& hypothesis : results[i].nbest) {
        alignments.back().push_back(
            hypothesis.tokens.empty()
                ? ""
                : pharaoh(align_words(attention_map(forced, request.texts[i], hypothesis.tokens))));
      }
    }
  }
  return json_response(translation_response(results, request, alignments),
                       static_cast<int64_t>(request.texts.size()));
}

HttpResponse TranslationServer::Impl::attention(const std::string& body, const Caller& caller) {
  const auto request =
      parse_attention_request(body, served.model.front()->config(), options.limits);
  access.charge_characters(caller, characters({request.text}));
  const std::string tgt_lang = target_of(request.tgt_lang);
  auto lines = encode_texts({request.text}, encoder(tgt_lang));
  const auto results = queue.submit(std::move(lines), served.config.decode).get();
  const auto& result = results.front();
  if (!result.ok()) throw RequestError(400, *result.error);
  if (result.nbest.empty() || result.nbest.front().tokens.empty()) {
    throw RequestError(400, "the text or its translation is empty: no attention to draw");
  }
  // One teacher-forced pass over the translation, on this thread (the model is only read).
  const auto map = attention_map(teacher_forcing(tgt_lang), request.text,
                                 result.nbest.front().tokens, request.view);
  HttpResponse res;
  res.content_type = "image/svg+xml";
  res.body = attention_svg(map);
  res.texts = 1;
  return res;
}

HttpResponse TranslationServer::Impl::score(const std::string& body, const Caller& caller) {
  const auto request = parse_score_request(body, options.limits);
  access.charge_characters(caller, characters(request.src) + characters(request.tgt));
  const auto examples =
      encode_pairs(served.tokenizer, request.src, request.tgt,
                   LanguageTags(served.config.data, served.tokenizer), target_of(request.tgt_lang));
  std::vector<SentenceScore> scores;
  try {  // teacher forcing on this thread, as nmt score does (the model is only read)
    scores = teacher_forced_scores(served.model, examples, served.config.decode.batch_tokens,
                                   served.device);
  } catch (const Error& e) {
    throw RequestError(400, e.what());  // a pair longer than the model reads
  }
  json out = json::array();
  for (const auto& s : scores) {
    out.push_back({{"log_prob", s.log_prob}, {"mean", s.mean()}, {"tokens", s.tokens}});
  }
  return json_response({{"scores", std::move(out)}}, static_cast<int64_t>(request.src.size()));
}

std::string TranslationServer::Impl::target_of(const std::string& requested) const {
  try {  // a pair the model was not trained on is a 400, never output
    return resolve_pair(served.config.data, requested.empty() ? served.tgt_lang : requested,
                        "\"tgt_lang\"")
        .tgt;
  } catch (const Error& e) {
    throw RequestError(400, e.what());
  }
}

json TranslationServer::Impl::health() const {
  const auto stats = queue.stats();
  return {{"status", "ok"},       {"queued", stats.queued},   {"requests", stats.requests},
          {"texts", stats.texts}, {"batches", stats.batches}, {"decoding", stats.decoding}};
}

json TranslationServer::Impl::info() const {
  const json config = config_to_json(served.config);
  return {{"checkpoint", served.checkpoint},
          {"model", config["model"]},
          {"languages",
           {{"source", served.config.data.src_lang},
            {"target", served.tgt_lang.empty() ? served.config.data.tgt_lang : served.tgt_lang},
            {"pairs", pair_names(served.config.data)},
            {"targets", target_languages(served.config.data)}}},
          {"vocabulary",
           {{"source", served.tokenizer.src_vocab_size()},
            {"target", served.tokenizer.tgt_vocab_size()},
            {"joint", served.tokenizer.joint()}}},
          {"decode", config["decode"]},
          {"device", served.device.str()},
          {"precision", choice_name(options.batching.precision)},
          {"limits",
           {{"max_body_bytes", options.limits.max_body_bytes},
            {"max_text_bytes", options.limits.max_text_bytes},
            {"max_texts", options.limits.max_texts},
            {"max_beam", options.limits.max_beam}}},
          {"access",
           {{"keys", access.keys_required()}, {"req_limit", options.access.requests_per_minute}}},
          {"batching",
           {{"max_batch_tokens", options.batching.max_batch_tokens},
            {"max_wait_ms", options.batching.max_wait.count()},
            {"queue", options.batching.capacity},
            {"workers", options.batching.workers}}}};
}

TranslationServer::TranslationServer(ServedModel served, ServeOptions options)
    : impl_(std::make_unique<Impl>(std::move(served), std::move(options))) {}

TranslationServer::~TranslationServer() { stop(); }

int TranslationServer::start() {
  // A client closing its connection early must not end the server with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  return impl_->http.start();
}

void TranslationServer::stop() {
  impl_->queue.flush();
  impl_->http.stop();  // answers the requests already in (the queue decodes them)
  impl_->queue.close();
}

bool TranslationServer::running() const { return impl_->http.running(); }

bool TranslationServer::tls() const { return impl_->http.tls(); }

BatchStats TranslationServer::stats() const { return impl_->queue.stats(); }

std::string TranslationServer::reload_keys() { return impl_->access.reload(); }

}  // namespace nmt

#else  // built without Boost.Beast or OpenSSL

namespace nmt {

void require_http_server() {
  throw Error(
      "this nmt was built without Boost.Beast and OpenSSL, which nmt serve needs: install them "
      "(apt-get install libboost-dev libssl-dev, or run scripts/setup.sh) and rebuild");
}

struct TranslationServer::Impl {};

TranslationServer::TranslationServer(ServedModel, ServeOptions) { require_http_server(); }
TranslationServer::~TranslationServer() = default;
int TranslationServer::start() { return -1; }
void TranslationServer::stop() {}
bool TranslationServer::running() const { return false; }
bool TranslationServer::tls() const { return false; }
BatchStats TranslationServer::stats() const { return {}; }
std::string TranslationServer::reload_keys() { return ""; }

}  // namespace nmt

#endif
