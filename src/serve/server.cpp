#include "serve/server.h"

#include "core/error.h"
#include "core/languages.h"

#if NMT_HAVE_HTTPLIB

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "decode/alignment.h"
#include "decode/attention_svg.h"
#include "decode/evaluation.h"
#include "nmt/page.h"

namespace nmt {

namespace {

using json = nlohmann::json;
constexpr const char* kJson = "application/json";

/// The model's language pairs for /info: ["en-de", "en-fr"].
json pair_names(const DataConfig& data) {
  json names = json::array();
  for (const auto& pair : trained_pairs(data)) names.push_back(pair.name());
  return names;
}

/// The batching options with the served model's language tags.
BatchOptions with_tags(BatchOptions options, const ServedModel& served) {
  options.tags = LanguageTags(served.config.data, served.tokenizer);
  return options;
}
/// Connections waiting to be accepted. httplib's compiled-in backlog of 5 drops connections (the
/// client retries a second later) when a few dozen clients connect at once.
constexpr int kListenBacklog = 128;

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_body(message), kJson);
}

/// Messages for the errors httplib detects before a handler runs.
std::string status_text(int status) {
  switch (status) {
    case 400:
      return "bad request (malformed HTTP)";
    case 413:
      return "the request is too large";
    case 414:
      return "the request line is too long";
    default:
      return "HTTP status " + std::to_string(status);
  }
}

/// Whether `sock` is a listening TCP socket bound to `port`: the socket the socket options
/// callback was handed is the one httplib listens on (if a newer httplib broke that, every
/// server start would say so instead of widening some other socket's backlog).
bool listens_on(int sock, int port) {
  int accepting = 0;
  socklen_t length = sizeof accepting;
  sockaddr_storage address{};
  socklen_t address_length = sizeof address;
  if (sock < 0 || ::getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) != 0 ||
      accepting == 0 ||
      ::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &address_length) != 0) {
    return false;
  }
  const auto bound = address.ss_family == AF_INET6
                         ? reinterpret_cast<const sockaddr_in6&>(address).sin6_port
                         : reinterpret_cast<const sockaddr_in&>(address).sin_port;
  return ntohs(bound) == port;
}

/// The one method a known route answers, or nullptr for an unknown route.
const char* allowed_method(const std::string& path) {
  if (path == "/translate" || path == "/attention" || path == "/score") return "POST";
  if (path == "/" || path == "/health" || path == "/info") return "GET";
  return nullptr;
}

/// The page may load nothing from elsewhere and be framed by no other site.
void set_page_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                 "img-src blob:; connect-src 'self'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
}

}  // namespace

void require_http_server() {}

struct TranslationServer::Impl {
  Impl(ServedModel served_model, ServeOptions serve_options)
      : served(std::move(served_model)),
        options(std::move(serve_options)),
        queue(served.model, served.tokenizer, served.device, with_tags(options.batching, served)) {
    if (!options.text.words) options.text.words = served.tokenizer.word_casing();
    if (options.text.max_pieces == 0) {
      options.text.max_pieces = segment_limit(served.model, served.config.data.max_len,
                                              served.config.data.lang_tag == LangTag::kSource);
    }
  }

  void configure();
  void translate(const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& reader);
  void attention(const httplib::Request& req, httplib::Response& res);
  void score(const httplib::Request& req, httplib::Response& res);
  /// Each text's "prefix" and "constraints" (encode_guide, check_guide): a RequestError 400
  /// naming the text when one cannot be encoded or does not fit its output.
  void add_guides(std::vector<SourceLine>& lines, const TranslateRequest& request) const;
  /// The request's texts as text (TextPlan): their segments decoded in the queue, joined back.
  std::vector<TranslationResult> translate_texts(const TranslateRequest& request,
                                                 const std::string& tgt_lang,
                                                 const LineEncoder& encode,
                                                 const std::function<Translator&()>& attention_of);
  json info() const;
  /// The target language of a request: its "tgt_lang", else serve --tgt-lang, else the model's
  /// only one; a 400 naming the model's pairs when it was not trained for it or none is chosen.
  std::string target_of(const std::string& requested) const;

  ServedModel served;
  ServeOptions options;
  BatchQueue queue;
  httplib::Server http;
  int listen_socket = -1;  ///< the listening socket, as httplib handed it to the socket options
  std::thread listener;
  std::atomic<bool> listening{false};
};

void TranslationServer::Impl::configure() {
  const int threads = options.http_threads;
  // httplib takes ownership of the TaskQueue it is given (its API: a raw pointer).
  http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  http.set_read_timeout(options.read_timeout_s, 0);
  http.set_write_timeout(options.read_timeout_s, 0);
  http.set_keep_alive_timeout(options.keep_alive_s);
  http.set_keep_alive_max_count(size_t(options.keep_alive_requests));
  http.set_payload_max_length(options.limits.max_body_bytes);
  http.set_tcp_nodelay(true);
  // The one public way to the socket httplib listens on: the socket options callback, called
  // on it before bind_to_port binds it (and on each address it tries first).
  http.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_socket = sock;
  });
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const char* allowed = allowed_method(req.path);
    if (allowed == nullptr) {
      send_error(res, 404,
                 "no route " + req.path +
                     " (routes: GET /, POST /translate, POST /score, POST /attention, GET /health, "
                     "GET /info)");
      return httplib::Server::HandlerResponse::Handled;
    }
    const bool head = req.method == "HEAD" && std::string(allowed) == "GET";
    if (req.method != allowed && !head) {
      res.set_header("Allow", allowed);
      send_error(res, 405, req.method + " " + req.path + " is not allowed (use " + allowed + ")");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const auto stats = queue.stats();
    res.set_content(dump({{"status", "ok"},
                          {"queued", stats.queued},
                          {"requests", stats.requests},
                          {"texts", stats.texts},
                          {"batches", stats.batches},
                          {"decoding", stats.decoding}}),
                    kJson);
  });
  http.Get("/info", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(info()), kJson);
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    set_page_headers(res);
    res.set_content(kPageHtml, "text/html; charset=utf-8");
  });
  http.Post("/score",
            [this](const httplib::Request& req, httplib::Response& res) { score(req, res); });
  http.Post("/attention",
            [this](const httplib::Request& req, httplib::Response& res) { attention(req, res); });
  http.Post("/translate",
            [this](const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& reader) { translate(req, res, reader); });
  // Errors the library answers itself (a bad request line, a body above the limit) get a
  // JSON body too.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) res.set_content(error_body(status_text(res.status)), kJson);
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          send_error(res, 500, std::string("internal error: ") + e.what());
        } catch (...) {
          send_error(res, 500, "internal error");
        }
      });
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
    const std::function<Translator&()>& attention_of) {
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
    return align_translation(attention_of(), source, translation, request.text->view);
  });
}

void TranslationServer::Impl::translate(const httplib::Request&, httplib::Response& res,
                                        const httplib::ContentReader& reader) {
  const auto& limits = options.limits;
  try {
    std::string body;
    bool too_large = false;
    const bool complete = reader([&](const char* data, size_t length) {
      if (body.size() + length > limits.max_body_bytes) {
        too_large = true;
        return false;  // stop reading
      }
      body.append(data, length);
      return true;
    });
    if (too_large || res.status == 413) {
      throw RequestError(413, "the body is larger than this server's limit of " +
                                  std::to_string(limits.max_body_bytes) +
                                  " bytes (--max-body-bytes)");
    }
    if (!complete) throw RequestError(400, "the body could not be read (cut short or too slow)");
    const auto request = parse_translate_request(body, served.config.decode, limits, options.text);
    const std::string tgt_lang = target_of(request.tgt_lang);
    const auto encode = [&](const std::string& text, size_t number) {
      auto line = encode_line(served.tokenizer, served.model, text, number);
      line.tgt_lang = tgt_lang;
      return line;
    };
    // One teacher-forced pass per aligned hypothesis, on this thread (the model is only read).
    std::unique_ptr<Translator> aligner;
    const auto attention_of = [&]() -> Translator& {
      if (!aligner) {
        aligner = std::make_unique<Translator>(served.model, served.tokenizer, served.config.decode,
                                               served.device);
        aligner->set_log(nullptr);
        aligner->set_language(LanguageTags(served.config.data, served.tokenizer), tgt_lang);
      }
      return *aligner;
    };
    std::vector<TranslationResult> results;
    std::vector<std::vector<std::string>> alignments;
    if (request.text) {
      results = translate_texts(request, tgt_lang, encode, attention_of);
    } else {
      auto lines = encode_texts(request.texts, encode);
      add_guides(lines, request);
      if (!lines.empty()) results = queue.submit(std::move(lines), request.decode).get();
    }
    if (request.alignment) {
      for (size_t i = 0; i < results.size(); ++i) {
        alignments.emplace_back();
        for (const auto& hypothesis : results[i].nbest) {
          alignments.back().push_back(hypothesis.tokens.empty()
                                          ? ""
                                          : pharaoh(align_words(attention_of().attention(
                                                request.texts[i], hypothesis.tokens))));
        }
      }
    }
    res.status = 200;
    res.set_content(dump(translation_response(results, request, alignments)), kJson);
  } catch (const RequestError& e) {
    if (e.status() == 503) res.set_header("Retry-After", "1");
    send_error(res, e.status(), e.what());
  }
}

void TranslationServer::Impl::attention(const httplib::Request& req, httplib::Response& res) {
  try {
    const auto request =
        parse_attention_request(req.body, served.model.front()->config(), options.limits);
    const std::string tgt_lang = target_of(request.tgt_lang);
    auto lines = encode_texts({request.text}, [&](const std::string& text, size_t number) {
      auto line = encode_line(served.tokenizer, served.model, text, number);
      line.tgt_lang = tgt_lang;
      return line;
    });
    const auto results = queue.submit(std::move(lines), served.config.decode).get();
    const auto& result = results.front();
    if (!result.ok()) throw RequestError(400, *result.error);
    if (result.nbest.empty() || result.nbest.front().tokens.empty()) {
      throw RequestError(400, "the text or its translation is empty: no attention to draw");
    }
    // One teacher-forced pass over the translation, on this thread (the model is only read).
    Translator translator(served.model, served.tokenizer, served.config.decode, served.device);
    translator.set_log(nullptr);
    translator.set_language(LanguageTags(served.config.data, served.tokenizer), tgt_lang);
    const auto map = translator.attention(request.text, result.nbest.front().tokens, request.view);
    res.status = 200;
    res.set_content(attention_svg(map), "image/svg+xml");
  } catch (const RequestError& e) {
    if (e.status() == 503) res.set_header("Retry-After", "1");
    send_error(res, e.status(), e.what());
  }
}

void TranslationServer::Impl::score(const httplib::Request& req, httplib::Response& res) {
  try {
    const auto request = parse_score_request(req.body, options.limits);
    const auto examples = encode_pairs(served.tokenizer, request.src, request.tgt,
                                       LanguageTags(served.config.data, served.tokenizer),
                                       target_of(request.tgt_lang));
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
    res.status = 200;
    res.set_content(dump({{"scores", std::move(out)}}), kJson);
  } catch (const RequestError& e) {
    send_error(res, e.status(), e.what());
  }
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
          {"batching",
           {{"max_batch_tokens", options.batching.max_batch_tokens},
            {"max_wait_ms", options.batching.max_wait.count()},
            {"queue", options.batching.capacity},
            {"workers", options.batching.workers}}}};
}

TranslationServer::TranslationServer(ServedModel served, ServeOptions options)
    : impl_(std::make_unique<Impl>(std::move(served), std::move(options))) {
  impl_->configure();
}

TranslationServer::~TranslationServer() { stop(); }

int TranslationServer::start() {
  if (impl_->listener.joinable()) throw Error("the server has already been started");
  // A client closing its connection early must not end the server with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const auto& host = impl_->options.host;
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(host);
  } else if (!impl_->http.bind_to_port(host, port)) {
    port = -1;
  }
  if (port < 0) {
    throw Error("cannot listen on " + host + ":" + std::to_string(impl_->options.port) +
                " (the port is in use, or the host is not an address of this machine)");
  }
  // A second listen() on a listening socket only changes its backlog (POSIX).
  if (!listens_on(impl_->listen_socket, port) ||
      ::listen(impl_->listen_socket, kListenBacklog) != 0) {
    throw Error("cannot widen the accept backlog of " + host + ":" + std::to_string(port) +
                ": this cpp-httplib (" + std::string(CPPHTTPLIB_VERSION) +
                ") did not pass its listening socket to the socket options callback, as 0.11 "
                "does");
  }
  impl_->listening = true;
  impl_->listener = std::thread([impl = impl_.get()] {
    impl->http.listen_after_bind();
    impl->listening = false;
  });
  return port;
}

void TranslationServer::stop() {
  impl_->queue.flush();
  // httplib's stop() does nothing until its accept loop runs: repeat until the loop has ended.
  // The loop then waits for the connections it accepted, whose requests the queue answers.
  while (impl_->listening) {
    impl_->http.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (impl_->listener.joinable()) impl_->listener.join();
  impl_->queue.close();
}

bool TranslationServer::running() const { return impl_->listening; }

BatchStats TranslationServer::stats() const { return impl_->queue.stats(); }

}  // namespace nmt

#else  // built without cpp-httplib

namespace nmt {

void require_http_server() {
  throw Error(
      "this nmt was built without cpp-httplib, which nmt serve needs: install it "
      "(apt-get install libcpp-httplib-dev, or run scripts/setup.sh) and rebuild");
}

struct TranslationServer::Impl {};

TranslationServer::TranslationServer(ServedModel, ServeOptions) { require_http_server(); }
TranslationServer::~TranslationServer() = default;
int TranslationServer::start() { return -1; }
void TranslationServer::stop() {}
bool TranslationServer::running() const { return false; }
BatchStats TranslationServer::stats() const { return {}; }

}  // namespace nmt

#endif
