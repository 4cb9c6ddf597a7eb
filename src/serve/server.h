#pragma once

// `nmt serve`'s HTTP server (cpp-httplib): POST /translate, GET /health, GET /info, JSON in and
// out, requests decoded together by a BatchQueue. Built without cpp-httplib, constructing a
// TranslationServer is an nmt::Error that says what to install.

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/config.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
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
  int http_threads = 64;          ///< connections served at once (more wait to be accepted)
  int read_timeout_s = 5;         ///< a client silent this long mid-request is dropped (and writes)
  int keep_alive_s = 5;           ///< an idle kept-alive connection is closed after this
  int keep_alive_requests = 100;  ///< requests per connection before it is closed
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

/// Throws an nmt::Error that says what to install when this build has no cpp-httplib.
void require_http_server();

class TranslationServer {
 public:
  /// Starts the decoding workers; nothing listens before start().
  TranslationServer(ServedModel served, ServeOptions options);
  /// stop()
  ~TranslationServer();
  TranslationServer(const TranslationServer&) = delete;
  TranslationServer& operator=(const TranslationServer&) = delete;

  /// Binds options.host:options.port (a bind failure is an nmt::Error naming them) and serves
  /// on a thread of its own. Returns the port (the chosen one when options.port is 0).
  int start();
  /// Stops accepting connections, answers the requests already received (queued ones are
  /// translated), then stops the decoding workers. Idempotent.
  void stop();
  /// False before start(), after stop(), or when the listening thread has ended.
  bool running() const;
  BatchStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt
