#pragma once

// nmt serve's HTTP/1.1 transport, on Boost.Beast (Asio): connections are read and written by a
// few I/O threads that never block, so slow and idle clients cost a socket each, not a thread.
// - A request's headers, its body and its response each have one total deadline (not one per
//   read): a client that trickles a byte at a time is closed when its deadline passes.
// - Connections are limited in all and per client address; over a limit a connection is
//   answered 503 and closed at once.
// - A whole request runs on one of `handler_threads` threads; when every one is busy, the
//   request is answered 503 at once. Requests answered from their headers (routing errors,
//   /health) never wait for a handler thread.
// - HTTPS when a certificate and key are given (OpenSSL through Asio).
// It knows nothing of translation: serve/server.cpp gives it the handlers.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nmt {

/// A request as the handlers see it.
struct HttpRequest {
  std::string method;
  std::string path;    ///< the request target without its query
  std::string client;  ///< the peer's address ("127.0.0.1")
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  ///< empty in the headers handler: the body is read after it
  /// The value of header `name` (any case), or "" when it is absent.
  std::string header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t texts = 0;  ///< texts the request carried, for the metrics (the transport ignores it)
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           ///< 0: any free port
  int io_threads = 2;        ///< threads that read and write sockets (never blocked by a handler)
  int handler_threads = 64;  ///< requests handled at once; one more is answered 503
  std::chrono::milliseconds header_timeout{
      10000};                                      ///< request line and headers (and TLS handshake)
  std::chrono::milliseconds body_timeout{30000};   ///< the whole body
  std::chrono::milliseconds write_timeout{30000};  ///< the whole response
  std::chrono::milliseconds keep_alive{5000};      ///< idle between requests (then header_timeout)
  int keep_alive_requests = 100;                   ///< requests per connection before it is closed
  size_t max_header_bytes = 64 * 1024;             ///< request line and headers (400 above)
  size_t max_body_bytes = 1 << 20;                 ///< 413 above
  size_t max_connections = 4096;                   ///< open connections in all
  size_t max_client_connections = 64;              ///< open connections from one address
  std::string tls_cert;  ///< PEM certificate chain; with tls_key: HTTPS only
  std::string tls_key;   ///< PEM private key
};

/// Why a connection or request was turned away before a handler answered it.
enum class Rejection {
  kIdle,               ///< a new connection sent nothing within the header deadline
  kHeaderDeadline,     ///< headers not complete within their deadline
  kBodyDeadline,       ///< body not complete within its deadline
  kAdmission,          ///< every handler thread was busy (503)
  kConnections,        ///< max_connections open (503)
  kClientConnections,  ///< max_client_connections open from the address (503)
  kTlsHandshake,       ///< the TLS handshake failed or did not finish in time
};
/// "idle", "header_deadline", ... (the metrics' label values).
const char* rejection_name(Rejection reason);
constexpr Rejection kRejections[] = {Rejection::kIdle,         Rejection::kHeaderDeadline,
                                     Rejection::kBodyDeadline, Rejection::kAdmission,
                                     Rejection::kConnections,  Rejection::kClientConnections,
                                     Rejection::kTlsHandshake};

struct HttpHandlers {
  /// Once a request's headers are in, on an I/O thread (must not block): a response ends the
  /// request there (a routing error, a cheap GET route, a refused key); nullopt reads the body
  /// and hands the request to `handle`.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> headers;
  /// The whole request, on a handler thread (may block).
  std::function<HttpResponse(const HttpRequest&)> handle;
  /// The answer to what the transport refuses itself: 400 malformed HTTP, 413 a body over the
  /// limit, 400 headers over theirs, 503 busy (given the reason's words).
  std::function<HttpResponse(int status, const std::string& message)> error;
  /// Called for every response written (any thread), for the metrics. May be empty.
  std::function<void(const HttpRequest&, const HttpResponse&)> sent;
  /// Called for every rejection (any thread). May be empty.
  std::function<void(Rejection)> rejected;
};

class HttpServer {
 public:
  /// Loads the TLS certificate and key when given: an nmt::Error naming the file otherwise.
  HttpServer(HttpOptions options, HttpHandlers handlers);
  /// stop()
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and listens (an nmt::Error naming host and port when it cannot), then serves on
  /// threads of its own. Returns the port (the chosen one when options.port is 0).
  int start();
  /// Stops accepting, answers every request whose headers are in (each phase within its
  /// deadline), then closes the other connections. Idempotent.
  void stop();
  bool running() const;
  bool tls() const;

  struct Load {
    int64_t connections = 0;  ///< open now
    int64_t busy = 0;         ///< handler threads at work now
  };
  Load load() const;

  struct Impl;  // public for the connections' sessions in http_server.cpp; opaque elsewhere

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt
