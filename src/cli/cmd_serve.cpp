// nmt serve: argv -> ServeOptions, a checkpoint loaded as `nmt translate` loads it, then HTTP
// until SIGINT/SIGTERM (stop accepting, answer what is queued, exit 0).
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "core/device.h"
#include "core/error.h"
#include "serve/server.h"
#include "serve/stop_signals.h"

namespace nmt::cli {
namespace {

void add_serve_options(cxxopts::Options& options) {
  const ServeOptions d;
  const auto number = [](auto value) { return std::to_string(value); };
  // clang-format off
  options.add_options("server")
      ("host", "address to listen on (0.0.0.0: every interface)",
       cxxopts::value<std::string>()->default_value(d.host), "ADDR")
      ("port", "port (0: any free port; the chosen one is printed)",
       cxxopts::value<int>()->default_value(number(d.port)), "N")
      ("max-batch-tokens", "tokens of queued requests decoded together, each text weighing "
       "(pieces + 1) x beam (or samples), as decode.batch_tokens counts them before padding",
       cxxopts::value<int64_t>()->default_value(number(d.batching.max_batch_tokens)), "N")
      ("max-wait-ms", "how long a request waits for others to batch with",
       cxxopts::value<int64_t>()->default_value(number(d.batching.max_wait.count())), "M")
      ("queue", "requests waiting to be decoded; more are answered 503",
       cxxopts::value<size_t>()->default_value(number(d.batching.capacity)), "N")
      ("max-body-bytes", "request body limit (413 above)",
       cxxopts::value<size_t>()->default_value(number(d.limits.max_body_bytes)), "N")
      ("max-text-bytes", "limit of one text (413 above)",
       cxxopts::value<size_t>()->default_value(number(d.limits.max_text_bytes)), "N")
      ("max-texts", "texts in one request (413 above)",
       cxxopts::value<size_t>()->default_value(number(d.limits.max_texts)), "N")
      ("max-beam", "largest beam or nbest a request may ask for (400 above)",
       cxxopts::value<int64_t>()->default_value(number(d.limits.max_beam)), "N")
      ("http-threads", "requests handled at once; one more is answered 503 at once",
       cxxopts::value<int>()->default_value(number(d.http_threads)), "N")
      ("header-timeout", "seconds for a request's line and headers (and the TLS handshake), "
       "in all: a client still sending them is closed",
       cxxopts::value<int>()->default_value(number(d.header_timeout_s)), "S")
      ("body-timeout", "seconds for a request's body in all, and again for its response",
       cxxopts::value<int>()->default_value(number(d.body_timeout_s)), "S")
      ("keep-alive", "seconds an idle kept-alive connection waits for its next request",
       cxxopts::value<int>()->default_value(number(d.keep_alive_s)), "S")
      ("max-connections", "open connections; one more is answered 503 and closed",
       cxxopts::value<size_t>()->default_value(number(d.max_connections)), "N")
      ("max-client-connections", "open connections from one client address (503 above)",
       cxxopts::value<size_t>()->default_value(number(d.max_client_connections)), "N")
      ("api-keys", "file of API keys, one a line: KEY [REQUESTS_PER_MINUTE "
       "[CHARACTERS_PER_MINUTE]]; requests then need one ('Authorization: Bearer KEY' or "
       "\"api_key\"; 401 without); SIGHUP reads it again",
       cxxopts::value<std::string>()->default_value(""), "FILE")
      ("req-limit", "requests per minute from one client address when no keys are used "
       "(429 above; 0: no limit)",
       cxxopts::value<int64_t>()->default_value("0"), "N")
      ("tls-cert", "PEM certificate chain: serve HTTPS (with --tls-key)",
       cxxopts::value<std::string>()->default_value(""), "FILE")
      ("tls-key", "PEM private key of --tls-cert",
       cxxopts::value<std::string>()->default_value(""), "FILE");
  // clang-format on
}

ServeOptions serve_options_from_args(const cxxopts::ParseResult& args) {
  ServeOptions options;
  options.host = args["host"].as<std::string>();
  options.port = args["port"].as<int>();
  options.batching.max_batch_tokens = args["max-batch-tokens"].as<int64_t>();
  options.batching.max_wait = std::chrono::milliseconds(args["max-wait-ms"].as<int64_t>());
  options.batching.capacity = args["queue"].as<size_t>();
  options.batching.precision =
      require_choice<Precision>("--precision", args["precision"].as<std::string>());
  options.limits.max_body_bytes = args["max-body-bytes"].as<size_t>();
  options.limits.max_text_bytes = args["max-text-bytes"].as<size_t>();
  options.limits.max_texts = args["max-texts"].as<size_t>();
  options.limits.max_beam = args["max-beam"].as<int64_t>();
  options.http_threads = args["http-threads"].as<int>();
  options.header_timeout_s = args["header-timeout"].as<int>();
  options.body_timeout_s = args["body-timeout"].as<int>();
  options.keep_alive_s = args["keep-alive"].as<int>();
  options.max_connections = args["max-connections"].as<size_t>();
  options.max_client_connections = args["max-client-connections"].as<size_t>();
  options.access.key_file = args["api-keys"].as<std::string>();
  options.access.requests_per_minute = args["req-limit"].as<int64_t>();
  options.tls_cert = args["tls-cert"].as<std::string>();
  options.tls_key = args["tls-key"].as<std::string>();
  if (options.port < 0 || options.port > 65535) throw Error("--port must be in 0..65535");
  if (options.batching.max_batch_tokens < 1) throw Error("--max-batch-tokens must be >= 1");
  if (options.batching.max_wait.count() < 0 || options.batching.max_wait.count() > 10000) {
    throw Error("--max-wait-ms must be in 0..10000");
  }
  if (options.batching.capacity < 1) throw Error("--queue must be >= 1");
  if (options.limits.max_beam < 1) throw Error("--max-beam must be >= 1");
  for (const auto& [name, value] : {std::pair{"--http-threads", options.http_threads},
                                    {"--header-timeout", options.header_timeout_s},
                                    {"--body-timeout", options.body_timeout_s},
                                    {"--keep-alive", options.keep_alive_s}}) {
    if (value < 1) throw Error(std::string(name) + " must be >= 1, not " + std::to_string(value));
  }
  if (options.max_connections < 1 || options.max_client_connections < 1) {
    throw Error("--max-connections and --max-client-connections must be >= 1");
  }
  if (options.access.requests_per_minute < 0) throw Error("--req-limit must be >= 0 (0: no limit)");
  if (!options.access.key_file.empty() && options.access.requests_per_minute > 0) {
    throw Error(
        "--req-limit is the limit without keys; with --api-keys give each key its "
        "requests per minute in the key file");
  }
  return options;
}

int run_serve(int argc, char** argv) {
  // Before the model loads: a stop signal meanwhile is kept for the drain below.
  catch_stop_signals();
  cxxopts::Options options(
      argv[0],
      "Serve translations over HTTP/1.1 with JSON (docs/serve.md): POST /translate "
      "{\"text\": \"...\" or [...], \"beam\", \"nbest\", \"length_penalty\", \"max_len_offset\", "
      "\"scores\", \"split\", \"format\"}, POST /score {\"src\", \"tgt\"}, POST /attention (an "
      "SVG), GET /health, "
      "GET /info, GET /metrics (Prometheus), and GET / (a translation page for the browser). "
      "Concurrent requests are "
      "decoded together. "
      "SIGINT/SIGTERM: stop accepting, answer what is queued, exit 0. SIGHUP: read --api-keys "
      "again. Beyond loopback: docs/serve.md.\n\n"
      "  nmt serve --checkpoint checkpoints/multi30k_en_de --port 8080\n"
      "  curl -s localhost:8080/translate -d '{\"text\": \"A dog runs.\"}'\n");
  add_decode_options(options);
  add_serve_options(options);
  add_workers_option(options, "server");
  add_text_options(options);
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  require_http_server();  // before loading a model the server could not serve
  auto serve_options = serve_options_from_args(args);
  auto session = open_decode_session(args);
  // OpenMP's thread count is per thread: the decoding threads share the one --threads set here.
  const int64_t workers = serve_options.batching.workers = decoding_workers(args, session.device);
  serve_options.batching.threads = std::max<int64_t>(1, at::get_num_threads() / workers);
  serve_options.text = text_options_from_args(args, session);
  ServedModel served{session.models, session.loaded.tokenizer,  session.loaded.config,
                     session.device, checkpoint_names(session), session.pair.tgt};
  served.config.decode = session.translator->config();
  const auto search = describe_search(served.config.decode);
  TranslationServer server(std::move(served), serve_options);
  const int port = server.start();
  std::printf("nmt serve: listening on %s://%s:%d (%s, %s, %s, %lld decoding worker(s))\n",
              server.tls() ? "https" : "http", serve_options.host.c_str(), port,
              checkpoint_names(session).c_str(), search.c_str(),
              describe_device(session.device).c_str(), static_cast<long long>(workers));
  std::fflush(stdout);
  const int signal_number = wait_for_stop_signal(
      [&] { return !server.running(); },
      [&] {
        if (serve_options.access.key_file.empty()) {
          std::cerr << "nmt serve: SIGHUP: nothing to read again (no --api-keys)" << std::endl;
          return;
        }
        const auto error = server.reload_keys();
        if (error.empty()) {
          std::cerr << "nmt serve: SIGHUP: API keys read again from "
                    << serve_options.access.key_file << std::endl;
        } else {
          std::cerr << "nmt serve: SIGHUP: the old API keys stay: " << error << std::endl;
        }
      });
  if (signal_number == 0) throw Error("nmt serve: the server stopped unexpectedly");
  std::cerr << "nmt serve: signal " << signal_number
            << ": not accepting new connections; answering " << server.stats().queued
            << " queued request(s)" << std::endl;
  server.stop();
  const auto stats = server.stats();
  std::cerr << "nmt serve: stopped after " << stats.requests << " request(s), " << stats.texts
            << " text(s) in " << stats.batches << " batch(es)" << std::endl;
  return 0;
}

const bool registered_serve = register_command(
    {"serve", "serve translations over HTTP (JSON, batched across requests)", run_serve, 45});

}  // namespace
}  // namespace nmt::cli
