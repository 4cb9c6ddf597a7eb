#pragma once

// `nmt serve`'s HTTP server: POST /translate, /score and /attention, GET /health, /info,
// /metrics and the page, JSON in and out, requests decoded together by a BatchQueue, behind the
// transport of serve/http_server.h (deadlines, connection limits, TLS) and the keys and budgets
// of serve/access.h. Built without Boost.Beast or OpenSSL, constructing a TranslationServer is
// an nmt::Error that says what to install.

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/config.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
#include "serve/access.h"
#include "serve/batch_queue.h"
#include "serve/request.h"

namespace nmt {

/// Where and how the server listens, and what it accepts.
struct ServeOptions {
  std::string host = "127.0.0.1";  ///< loopback unless told otherwise
  int port = 8080;                 ///< 0: any free port (start() returns it)
  ServeLimits limits;
  BatchOptions batching;
  TextOptions text;               ///< requests' "split", "format" and "casing" when they give none
  int http_threads = 64;          ///< requests handled at once; one more is answered 503
  int header_timeout_s = 10;      ///< a request's line and headers must arrive within this
  int body_timeout_s = 30;        ///< and its body within this (and a response be written)
  int keep_alive_s = 5;           ///< an idle kept-alive connection is closed after this
  int keep_alive_requests = 100;  ///< requests per connection before it is closed
  size_t max_connections = 4096;  ///< open connections; one more is answered 503 and closed
  size_t max_client_connections = 64;  ///< open connections from one address (likewise)
  std::string tls_cert;                ///< with tls_key: HTTPS (PEM files)
  std::string tls_key;
  AccessOptions access;  ///< API keys (--api-keys) and the per-address --req-limit
};

/// The model being served and what /info tells about it.
struct ServedModel {
  Ensemble model{Seq2Seq{nullptr}};  ///< one model, or an ensemble
  Tokenizer tokenizer;
  Config config;  ///< the checkpoint's config; config.decode = the request defaults
  at::Device device = at::kCPU;
  std::string checkpoint;  ///< path, for /info
  /// Requests without "tgt_lang" translate into this (serve --tgt-lang, or the model's only
  /// target language); "" = a model of several targets whose requests must name theirs.
  std::string tgt_lang;
};

/// Throws an nmt::Error that says what to install when this build has no HTTP server.
void require_http_server();

class TranslationServer {
 public:
  /// Starts the decoding workers; nothing listens before start(). A bad key file, certificate
  /// or key is an nmt::Error naming the file (and the line of a key file).
  TranslationServer(ServedModel served, ServeOptions options);
  /// stop()
  ~TranslationServer();
  TranslationServer(const TranslationServer&) = delete;
  TranslationServer& operator=(const TranslationServer&) = delete;

  /// Binds options.host:options.port (a bind failure is an nmt::Error naming them) and serves
  /// on threads of its own. Returns the port (the chosen one when options.port is 0).
  int start();
  /// Stops accepting connections, answers the requests already received (queued ones are
  /// translated), then stops the decoding workers. Idempotent.
  void stop();
  /// False before start(), after stop(), or when the listening thread has ended.
  bool running() const;
  bool tls() const;
  BatchStats stats() const;
  /// Reads the --api-keys file again (SIGHUP): "" when its keys are in use, else why not (the
  /// old keys stay).
  std::string reload_keys();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt
