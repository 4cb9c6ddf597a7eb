#include "serve/http_server.h"

#include "core/error.h"

#if NMT_HAVE_HTTP

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>

namespace nmt {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = beast::error_code;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

std::string_view view(beast::string_view text) { return {text.data(), text.size()}; }

bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

/// Whether `ec` is Beast's verdict on the bytes (a malformed request), not the socket's.
bool is_parse_error(const error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

/// Idle and slow connections each hold a descriptor: take every one the hard limit allows (as
/// nginx's worker_rlimit_nofile does).
void raise_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

/// OpenSSL's reason for the last error on this thread (and clears the queue).
std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no reason given";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

/// Checks a PEM file block by block before OpenSSL loads it, so that an error names the line:
/// the file must hold a certificate (`key` false) or a private key (`key` true), and each block
/// of that kind must decode.
void check_pem_file(const std::string& option, const std::string& path, bool key) {
  std::ifstream in(path);
  if (!in) throw Error(option + " " + path + ": cannot read the file");
  const std::string wanted = key ? "a PEM private key" : "a PEM certificate";
  struct Block {
    size_t line = 0;
    std::string label, text;
  };
  std::vector<Block> blocks;
  std::optional<Block> open;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool begin = line.rfind("-----BEGIN ", 0) == 0;
    const bool end = line.rfind("-----END ", 0) == 0;
    const auto where = path + ":" + std::to_string(number);
    if (begin && open) {
      throw Error(option + " " + where + ": a BEGIN line inside the block begun on line " +
                  std::to_string(open->line) + " (" + wanted + " expected)");
    }
    if (begin) {
      open = Block{number, line.substr(11, line.find("-----", 11) - 11), ""};
    } else if (end && !open) {
      throw Error(option + " " + where + ": an END line without its BEGIN line");
    }
    if (open) open->text += line + "\n";
    if (end && open) {
      blocks.push_back(std::move(*open));
      open.reset();
    }
  }
  if (open) {
    throw Error(option + " " + path + ":" + std::to_string(open->line) +
                ": the block begun here has no END line");
  }
  if (blocks.empty()) {
    throw Error(option + " " + path + ":1: no '-----BEGIN ...-----' line; " + wanted +
                " was expected");
  }
  bool found = false;
  for (const auto& block : blocks) {
    const bool is_key = block.label.size() >= 11 &&
                        block.label.compare(block.label.size() - 11, 11, "PRIVATE KEY") == 0;
    const bool is_cert = block.label == "CERTIFICATE" || block.label == "TRUSTED CERTIFICATE";
    if (key ? !is_key : !is_cert) continue;
    found = true;
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(block.text.data(), static_cast<int>(block.text.size())), &BIO_free);
    const bool decoded =
        key ? [&] {
          EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
          EVP_PKEY_free(pkey);
          return pkey != nullptr;
        }()
            : [&] {
                X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
                X509_free(cert);
                return cert != nullptr;
              }();
    if (!decoded) {
      throw Error(option + " " + path + ":" + std::to_string(block.line) + ": the " + block.label +
                  " block begun here does not decode (OpenSSL: " + openssl_reason() + ")");
    }
  }
  if (!found) {
    throw Error(option + " " + path + ":" + std::to_string(blocks.front().line) + ": a '" +
                blocks.front().label + "' block, but " + wanted + " was expected");
  }
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (same_text(key, name)) return value;
  }
  return "";
}

const char* rejection_name(Rejection reason) {
  switch (reason) {
    case Rejection::kIdle:
      return "idle";
    case Rejection::kHeaderDeadline:
      return "header_deadline";
    case Rejection::kBodyDeadline:
      return "body_deadline";
    case Rejection::kAdmission:
      return "admission";
    case Rejection::kConnections:
      return "connections";
    case Rejection::kClientConnections:
      return "client_connections";
    case Rejection::kTlsHandshake:
      return "tls_handshake";
  }
  return "unknown";
}

namespace http_detail {  // the server's parts (members of HttpServer::Impl)

/// The handler threads: jobs run on one of `size` threads, at most `size` at a time; a job past
/// that is refused, never queued behind the others (the caller answers 503 at once).
class HandlerPool {
 public:
  void start(int size) {
    size_ = size;
    for (int i = 0; i < size; ++i) threads_.emplace_back([this] { work(); });
  }
  /// Runs `job` on a handler thread if one is free; false when every one is busy.
  bool try_run(std::function<void()> job) {
    if (busy_.fetch_add(1) >= size_) {
      --busy_;
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    changed_.notify_one();
    return true;
  }
  /// Lets the threads finish the jobs handed in, then joins them.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }
  int64_t busy() const { return busy_; }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
      --busy_;
    }
  }

  int size_ = 0;
  std::atomic<int64_t> busy_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

/// The open connections, in all and per client address, against --max-connections and
/// --max-client-connections.
class OpenConnections {
 public:
  enum class Verdict { kAdmitted, kServerFull, kClientFull };
  /// Counts a connection from `client` in, unless a limit says no.
  Verdict admit(const std::string& client, size_t max_total, size_t max_per_client,
                size_t& client_open) {
    if (total_ >= static_cast<int64_t>(max_total)) return Verdict::kServerFull;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& open = per_client_[client];
      client_open = open;
      if (open >= max_per_client) return Verdict::kClientFull;
      ++open;
    }
    ++total_;
    return Verdict::kAdmitted;
  }
  void release(const std::string& client) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = per_client_.find(client);
      if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
    }
    --total_;
  }
  int64_t total() const { return total_; }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, size_t> per_client_;
  std::atomic<int64_t> total_{0};
};

/// Where the server is in its life: start() and stop() take `mutex`; the sessions read
/// `stopping`.
struct Lifecycle {
  std::mutex mutex;
  bool started = false;
  bool stopped = false;
  std::atomic<bool> stopping{false};
  std::atomic<bool> listening{false};
};

}  // namespace http_detail

struct HttpServer::Impl {
  using HandlerPool = http_detail::HandlerPool;
  using OpenConnections = http_detail::OpenConnections;
  using Lifecycle = http_detail::Lifecycle;

  Impl(HttpOptions http_options, HttpHandlers http_handlers)
      : options(std::move(http_options)), handlers(std::move(http_handlers)) {
    if (options.tls_cert.empty() != options.tls_key.empty()) {
      throw Error("--tls-cert and --tls-key go together: give both, or neither for HTTP");
    }
    if (!options.tls_cert.empty()) {
      tls.emplace(asio::ssl::context::tls_server);
      tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1);
      check_pem_file("--tls-cert", options.tls_cert, false);
      check_pem_file("--tls-key", options.tls_key, true);
      // Both decode: what OpenSSL can still refuse is the pair.
      error_code ec;
      tls->use_certificate_chain_file(options.tls_cert, ec);
      if (ec) throw Error("--tls-cert " + options.tls_cert + ": " + ec.message());
      tls->use_private_key_file(options.tls_key, asio::ssl::context::pem, ec);
      if (ec || SSL_CTX_check_private_key(tls->native_handle()) != 1) {
        throw Error("--tls-key " + options.tls_key + " is not the key of --tls-cert " +
                    options.tls_cert + " (OpenSSL: " + (ec ? ec.message() : openssl_reason()) +
                    ")");
      }
    }
  }

  void reject(Rejection reason) const {
    if (handlers.rejected) handlers.rejected(reason);
  }
  HttpResponse error(int status, const std::string& message) const {
    auto response = handlers.error(status, message);
    response.status = status;
    return response;
  }
  void accept();
  void admit(tcp::socket socket);
  /// Answers 503 on a connection turned away at accept and closes it, never waiting.
  void refuse_now(tcp::socket& socket, const std::string& message) const;
  void release(const std::string& client) { connections.release(client); }

  HttpOptions options;
  HttpHandlers handlers;
  // What the sessions touch, declared before the io_context: destroying it destroys them.
  OpenConnections connections;
  std::atomic<int64_t> in_flight{0};  ///< requests whose headers are in, not yet answered
  Lifecycle life;
  HandlerPool pool;
  std::optional<asio::ssl::context> tls;
  asio::io_context io;
  tcp::acceptor acceptor{asio::make_strand(io)};
  asio::steady_timer accept_pause{acceptor.get_executor()};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::vector<std::thread> io_threads;
};

namespace {

/// One connection: reads a request's headers, then (unless answered from them) its body, hands
/// it to a handler thread and writes the answer; again while the connection is kept alive.
/// Everything runs on the connection's strand, except the handler.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& server, Stream stream, std::string client)
      : server_(server), stream_(std::move(stream)), client_(std::move(client)) {}
  ~Session() {
    finish_request();
    server_.release(client_);
  }

  auto executor() { return lowest().get_executor(); }

  void start() {
    if constexpr (kTls) {
      lowest().expires_after(server_.options.header_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](const error_code& ec) {
                                if (ec) {
                                  self->server_.reject(Rejection::kTlsHandshake);
                                  return self->close();
                                }
                                self->read_header();
                              });
    } else {
      read_header();
    }
  }

 private:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const HttpOptions& options() const { return server_.options; }

  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(options().max_header_bytes));
    parser_->body_limit(static_cast<std::uint64_t>(options().max_body_bytes));
    request_ = HttpRequest{};
    request_.client = client_;
    // A kept-alive connection may idle first; then its headers have their own deadline.
    lowest().expires_after(answered_ == 0 ? options().header_timeout
                                          : options().keep_alive + options().header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](const error_code& ec, size_t) { self->on_header(ec); });
  }

  void on_header(const error_code& ec) {
    if (ec == beast::error::timeout) {
      if (parser_->got_some() || buffer_.size() > 0) {
        server_.reject(Rejection::kHeaderDeadline);
      } else if (answered_ == 0) {
        server_.reject(Rejection::kIdle);
      }
      return close();
    }
    if (ec == http::error::header_limit) {
      return refuse(400, "the request line and headers are larger than this server's limit of " +
                             std::to_string(options().max_header_bytes) + " bytes");
    }
    // A Content-Length above the limit is refused before any of the body is read.
    if (ec == http::error::body_limit) return refuse_body();
    if (ec) {
      if (is_parse_error(ec))
        return refuse(400, "bad request (malformed HTTP: " + ec.message() + ")");
      return close();
    }
    const auto& head = parser_->get();
    request_.method = std::string(head.method_string());
    const std::string_view target = view(head.target());
    request_.path = std::string(target.substr(0, target.find('?')));
    for (const auto& field : head) {
      request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    version_ = head.version();
    keep_alive_ = head.keep_alive() && answered_ + 1 < options().keep_alive_requests;
    ++server_.in_flight;
    in_flight_ = true;
    try {
      if (auto early = server_.handlers.headers(request_)) return respond(std::move(*early));
    } catch (const std::exception& e) {
      return respond(server_.error(500, std::string("internal error: ") + e.what()));
    }
    if (same_text(view(head[http::field::expect]), "100-continue")) {
      continue_.emplace(http::status::continue_, version_);
      lowest().expires_after(options().write_timeout);
      http::async_write(stream_, *continue_,
                        [self = this->shared_from_this()](const error_code& write_ec, size_t) {
                          if (write_ec) return self->close();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    lowest().expires_after(options().body_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](const error_code& ec, size_t) { self->on_body(ec); });
  }

  void on_body(const error_code& ec) {
    if (ec == beast::error::timeout) {
      server_.reject(Rejection::kBodyDeadline);
      return close();
    }
    if (ec == http::error::body_limit) return refuse_body();
    if (ec) {
      if (is_parse_error(ec))
        return refuse(400, "bad request (malformed HTTP: " + ec.message() + ")");
      return close();
    }
    request_.body = std::move(parser_->get().body());
    lowest().expires_never();
    const bool taken = server_.pool.try_run([self = this->shared_from_this()] {
      HttpResponse response;
      try {
        response = self->server_.handlers.handle(self->request_);
      } catch (const std::exception& e) {
        response = self->server_.error(500, std::string("internal error: ") + e.what());
      } catch (...) {
        response = self->server_.error(500, "internal error");
      }
      asio::post(self->stream_.get_executor(), [self, answer = std::move(response)]() mutable {
        self->respond(std::move(answer));
      });
    });
    if (!taken) {
      server_.reject(Rejection::kAdmission);
      auto busy = server_.error(503, "all " + std::to_string(options().handler_threads) +
                                         " of the server's request threads are busy; retry "
                                         "shortly (--http-threads)");
      busy.headers.emplace_back("Retry-After", "1");
      respond(std::move(busy));
    }
  }

  void refuse_body() {
    refuse(413, "the body is larger than this server's limit of " +
                    std::to_string(options().max_body_bytes) + " bytes (--max-body-bytes)");
  }

  /// Answers what the transport refuses itself, then closes.
  void refuse(int status, const std::string& message) {
    keep_alive_ = false;
    respond(server_.error(status, message));
  }

  void respond(HttpResponse answer) {
    auto message = std::make_shared<http::response<http::string_body>>();
    message->version(version_);
    message->result(static_cast<unsigned>(answer.status));
    message->set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) message->set(name, value);
    const size_t length = answer.body.size();
    if (request_.method != "HEAD") message->body() = std::move(answer.body);
    answer.body.clear();
    // A body left unread (answered from the headers) cannot be skipped on a kept-alive
    // connection: close, after reading what the client is still sending (a lingering close).
    linger_ = !parser_ || !parser_->is_done();
    if (linger_ || server_.life.stopping) keep_alive_ = false;
    message->keep_alive(keep_alive_);
    message->content_length(length);
    if (server_.handlers.sent) server_.handlers.sent(request_, answer);
    response_ = std::move(message);
    lowest().expires_after(options().write_timeout);
    http::async_write(
        stream_, *response_,
        [self = this->shared_from_this()](const error_code& ec, size_t) { self->on_write(ec); });
  }

  void on_write(const error_code& ec) {
    response_.reset();
    ++answered_;
    finish_request();
    if (ec) return close();
    if (linger_) return linger();
    if (!keep_alive_) return close();
    read_header();
  }

  void linger() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().expires_after(std::chrono::seconds(2));
    drain();
  }

  void drain() {
    lowest().async_read_some(asio::buffer(drain_),
                             [self = this->shared_from_this()](const error_code& ec, size_t n) {
                               self->drained_ += n;
                               if (ec || self->drained_ > (size_t{8} << 20)) return self->close();
                               self->drain();
                             });
  }

  void close() {
    finish_request();
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  void finish_request() {
    if (in_flight_) {
      in_flight_ = false;
      --server_.in_flight;
    }
  }

  HttpServer::Impl& server_;
  Stream stream_;
  std::string client_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::shared_ptr<http::response<http::string_body>> response_;
  HttpRequest request_;
  unsigned version_ = 11;
  int answered_ = 0;
  bool keep_alive_ = false;
  bool linger_ = false;
  bool in_flight_ = false;
  std::array<char, 16384> drain_{};
  size_t drained_ = 0;
};

/// Starts a session on its connection's strand, where all of its work runs.
template <class Session>
void start_on_strand(const std::shared_ptr<Session>& session) {
  asio::dispatch(session->executor(), [session] { session->start(); });
}

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(asio::make_strand(io), [this](const error_code& ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors (EMFILE) or buffers: pause instead of spinning on the error.
      accept_pause.expires_after(std::chrono::milliseconds(50));
      accept_pause.async_wait([this](const error_code&) { accept(); });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

void HttpServer::Impl::admit(tcp::socket socket) {
  error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  socket.set_option(tcp::no_delay(true), ec);
  const std::string client = peer.address().to_string();
  size_t open = 0;
  switch (
      connections.admit(client, options.max_connections, options.max_client_connections, open)) {
    case OpenConnections::Verdict::kServerFull:
      reject(Rejection::kConnections);
      return refuse_now(socket, "the server has " + std::to_string(options.max_connections) +
                                    " connections open (--max-connections)");
    case OpenConnections::Verdict::kClientFull:
      reject(Rejection::kClientConnections);
      return refuse_now(socket, client + " has " + std::to_string(open) +
                                    " connections open, this server's limit per client address "
                                    "(--max-client-connections)");
    case OpenConnections::Verdict::kAdmitted:
      break;
  }
  if (tls) {
    start_on_strand(std::make_shared<Session<TlsStream>>(
        *this, TlsStream(beast::tcp_stream(std::move(socket)), *tls), client));
  } else {
    start_on_strand(std::make_shared<Session<beast::tcp_stream>>(
        *this, beast::tcp_stream(std::move(socket)), client));
  }
}

void HttpServer::Impl::refuse_now(tcp::socket& socket, const std::string& message) const {
  if (!tls) {
    const auto answer = error(503, message);
    const std::string bytes =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + answer.content_type +
        "\r\nContent-Length: " + std::to_string(answer.body.size()) +
        "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + answer.body;
    // A new connection's send buffer is empty: this never blocks, and nothing waits for it.
    (void)::send(socket.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

HttpServer::HttpServer(HttpOptions options, HttpHandlers handlers)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handlers))) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start() {
  auto& impl = *impl_;
  std::lock_guard<std::mutex> lock(impl.life.mutex);
  if (impl.life.started) throw Error("the server has already been started");
  const auto& host = impl.options.host;
  const auto where = host + ":" + std::to_string(impl.options.port);
  error_code ec;
  tcp::resolver resolver(impl.io);
  const auto endpoints =
      resolver.resolve(host, std::to_string(impl.options.port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) {
    throw Error("cannot listen on " + where + ": the host is not an address of this machine (" +
                ec.message() + ")");
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (!ec) impl.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error("cannot listen on " + where +
                " (the port is in use, or the host is not an address of this machine: " +
                ec.message() + ")");
  }
  const int port = impl.acceptor.local_endpoint().port();
  raise_file_limit();
  impl.life.started = true;
  impl.life.listening = true;
  impl.pool.start(impl.options.handler_threads);
  impl.keep_running.emplace(impl.io.get_executor());
  asio::dispatch(impl.acceptor.get_executor(), [&impl] { impl.accept(); });
  for (int i = 0; i < std::max(1, impl.options.io_threads); ++i) {
    impl.io_threads.emplace_back([&impl] {
      for (;;) {
        try {
          impl.io.run();
          return;
        } catch (const std::exception&) {
          // A handler threw past its own catch: that connection is lost, the server is not.
        }
      }
    });
  }
  return port;
}

void HttpServer::stop() {
  auto& impl = *impl_;
  std::lock_guard<std::mutex> lock(impl.life.mutex);
  if (!impl.life.started || impl.life.stopped) return;
  impl.life.stopped = true;
  impl.life.stopping = true;
  asio::post(impl.acceptor.get_executor(), [&impl] {
    error_code ignored;
    impl.acceptor.close(ignored);
    impl.accept_pause.cancel();
  });
  // Requests whose headers are in are answered: each phase has its deadline, so this ends.
  while (impl.in_flight > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  impl.keep_running.reset();
  impl.io.stop();
  for (auto& thread : impl.io_threads) thread.join();
  impl.pool.close();
  impl.life.listening = false;
}

bool HttpServer::running() const { return impl_->life.listening; }

bool HttpServer::tls() const { return impl_->tls.has_value(); }

HttpServer::Load HttpServer::load() const {
  return {impl_->connections.total(), impl_->pool.busy()};
}

}  // namespace nmt

#endif  // NMT_HAVE_HTTP
