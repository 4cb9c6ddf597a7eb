// nmt serve beyond loopback: API keys and budgets (401, 429 with Retry-After, the others
// unaffected), the per-address --req-limit, the key file's errors and SIGHUP reload, GET
// /metrics, the transport's total deadlines, admission and per-address connection limits, and
// HTTPS with a certificate made here and verified by the client and by curl.
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>
#include <regex>
#include <thread>

#include "cli_test_util.h"
#include "core/error.h"
#include "serve/access.h"
#include "serve/metrics.h"
#include "serve_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const std::string kKeyA = "key-A-0123456789abcdef";
const std::string kKeyB = "key-B-0123456789abcdef";

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

/// POST `path` with `body` and, when `key` is not empty, `Authorization: Bearer KEY`.
httplib::Result post(int port, const std::string& path, const std::string& body,
                     const std::string& key = "") {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  httplib::Headers headers;
  if (!key.empty()) headers.emplace("Authorization", "Bearer " + key);
  return client.Post(path.c_str(), headers, body, "application/json");
}

/// The value of one sample of GET /metrics ("nmt_rejected_total{reason=\"key\"}"), -1 if absent.
double metric(int port, const std::string& sample) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get("/metrics");
  if (!res || res->status != 200) return -1;
  std::istringstream lines(res->body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  }
  return -1;
}

std::string error_of(const httplib::Result& res) {
  return res ? json::parse(res->body).value("error", std::string()) : "no response";
}

/// A server whose --api-keys file holds `keys` (the file lives as long as the server).
struct KeyedServer {
  explicit KeyedServer(const std::string& keys) {
    write_file(dir / "keys", keys);
    ServeOptions options;
    options.access.key_file = (dir / "keys").string();
    running.emplace(options);
  }
  int port() const { return running->port; }
  test::TempDir dir{"serve_keys"};
  std::optional<test::RunningServer> running;
};

// --- the key file and the budgets ----------------------------------------------------------

TEST(ServeAccess, KeyFileIsReadWithItsBudgetsAndItsErrorsNameTheFileAndLine) {
  const auto dir = test::temp_dir("serve_keys");
  const auto good = dir / "good.txt";
  write_file(good, "# the team's keys\n" + kKeyA + "\n\n" + kKeyB + " 30 5000\n");
  const auto keys = read_api_keys(good.string());
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].line, 2u);
  EXPECT_EQ(keys[0].requests_per_minute, 0);
  EXPECT_EQ(keys[1].line, 4u);
  EXPECT_EQ(keys[1].requests_per_minute, 30);
  EXPECT_EQ(keys[1].characters_per_minute, 5000);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {kKeyA + "\nshort-key\n", ":2: a key must be 16 to 256 printable ASCII"},
      {kKeyA + " many\n", ":1: the requests per minute must be a whole number >= 0"},
      {kKeyA + " 1 -5\n", ":1: the characters per minute must be a whole number"},
      {kKeyA + " 1 2 3\n", ":1: more than a key and two budgets"},
      {kKeyA + "\n" + kKeyB + "\n" + kKeyA + " 5\n", ":3: the same key as line 1"},
      {"# nothing but a comment\n", ": no keys in the file"},
  };
  for (const auto& [text, needle] : bad) {
    write_file(dir / "bad.txt", text);
    try {
      read_api_keys((dir / "bad.txt").string());
      ADD_FAILURE() << "no error for: " << text;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir / "bad.txt").string() + needle), std::string::npos) << message;
      EXPECT_EQ(message.find("short-key"), std::string::npos) << "the key is shown: " << message;
    }
  }
  test::expect_error([&] { read_api_keys((dir / "missing.txt").string()); },
                     "missing.txt: cannot read the file");
}

TEST(ServeAccess, TokenBucketHoldsAMinutesBudgetAndRefillsContinuously) {
  const auto t0 = Clock::now();
  TokenBucket bucket(60, t0);  // one a second
  EXPECT_EQ(bucket.take(60, t0), 0.0);
  EXPECT_NEAR(bucket.take(1, t0), 1.0, 1e-9);  // nothing taken: wait a second
  EXPECT_NEAR(bucket.take(1, t0 + milliseconds(500)), 0.5, 1e-9);
  EXPECT_EQ(bucket.take(1, t0 + seconds(1)), 0.0);
  EXPECT_FALSE(bucket.full(t0 + seconds(30)));
  EXPECT_TRUE(bucket.full(t0 + seconds(61)));
  EXPECT_EQ(bucket.take(60, t0 + seconds(600)), 0.0);  // never more than a minute's worth
  EXPECT_GT(bucket.take(1, t0 + seconds(600)), 0.0);
}

TEST(ServeAccess, KeysAreAskedOfEveryTranslationRouteInTheHeaderOrTheBody) {
  KeyedServer server(kKeyA + "\n" + kKeyB + "\n");
  const int port = server.port();
  const std::string body = R"({"text": "a dog runs ."})";
  const auto missing = post(port, "/translate", body);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_NE(error_of(missing).find("API key"), std::string::npos) << missing->body;
  for (const auto& path : {"/translate", "/score", "/attention"}) {
    const auto wrong =
        post(port, path, R"({"text": "a", "src": "a", "tgt": "b"})", "key-C-0123456789abcdef");
    ASSERT_TRUE(wrong) << path;
    EXPECT_EQ(wrong->status, 401) << path << " " << wrong->body;
    EXPECT_EQ(wrong->body.find("key-C"), std::string::npos) << "the key is echoed: " << wrong->body;
  }
  httplib::Client client("127.0.0.1", port);
  const auto basic =
      client.Post("/translate", {{"Authorization", "Basic " + kKeyA}}, body, "application/json");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->status, 401);
  EXPECT_NE(error_of(basic).find("'Bearer KEY'"), std::string::npos) << basic->body;
  // The right key, in the header or (as LibreTranslate takes it) the body.
  const auto header = post(port, "/translate", body, kKeyB);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->status, 200) << header->body;
  const auto in_body =
      post(port, "/translate", json{{"text", "a dog runs ."}, {"api_key", kKeyA}}.dump());
  ASSERT_TRUE(in_body);
  EXPECT_EQ(in_body->status, 200) << in_body->body;
  EXPECT_EQ(json::parse(in_body->body)["translations"], json::parse(header->body)["translations"]);
  // The key is not taken for a field of the request; /health, /info and /metrics need none.
  EXPECT_EQ(json::parse(client.Get("/info")->body)["access"]["keys"], true);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(metric(port, "nmt_rejected_total{reason=\"key\"}"), 5);
  const auto text = client.Get("/metrics")->body;
  EXPECT_EQ(text.find("key-A"), std::string::npos);
  EXPECT_EQ(text.find("key-C"), std::string::npos);
}

TEST(ServeAccess, AKeyOverItsBudgetGets429WithRetryAfterAndTheOthersAreUnaffected) {
  KeyedServer server(kKeyA + " 2\n" + kKeyB + " 0 40\n");
  const int port = server.port();
  const std::string body = R"({"text": "a dog runs ."})";
  for (int i = 0; i < 2; ++i) EXPECT_EQ(post(port, "/translate", body, kKeyA)->status, 200) << i;
  const auto over = post(port, "/translate", body, kKeyA);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 429) << over->body;
  const auto retry = over->get_header_value<uint64_t>("Retry-After");
  EXPECT_GE(retry, 1u);
  EXPECT_LE(retry, 30u);  // two a minute: the next one in about 30 s
  EXPECT_NE(error_of(over).find("2 requests per minute"), std::string::npos) << over->body;
  // The same key in the body is the same budget.
  EXPECT_EQ(post(port, "/translate", json{{"text", "a"}, {"api_key", kKeyA}}.dump())->status, 429);
  // Key B: no request limit, 40 characters a minute.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(post(port, "/translate", json{{"text", "a dog runs ."}}.dump(), kKeyB)->status, 200);
  }
  const auto chars = post(port, "/translate", json{{"text", "a man runs ."}}.dump(), kKeyB);
  ASSERT_TRUE(chars);
  EXPECT_EQ(chars->status, 429) << chars->body;
  EXPECT_TRUE(chars->has_header("Retry-After"));
  const auto huge = post(port, "/translate", json{{"text", std::string(41, 'a')}}.dump(), kKeyB);
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413) << huge->body;  // more than a minute's budget: waiting won't help
  EXPECT_EQ(metric(port, "nmt_rejected_total{reason=\"rate\"}"), 3);
}

TEST(ServeAccess, ReqLimitIsPerClientAddressWithoutKeys) {
  ServeOptions options;
  options.access.requests_per_minute = 3;
  test::RunningServer running(options);
  const std::string body = R"({"text": "a dog runs ."})";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(post(running.port, "/translate", body)->status, 200) << i;
  const auto over = post(running.port, "/translate", body);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 429);
  EXPECT_GE(over->get_header_value<uint64_t>("Retry-After"), 1u);
  EXPECT_NE(error_of(over).find("127.0.0.1"), std::string::npos) << over->body;
  httplib::Client client("127.0.0.1", running.port);
  EXPECT_EQ(client.Get("/health")->status, 200);  // never charged
}

// --- metrics ---------------------------------------------------------------------------------

TEST(ServeMetrics, HistogramBucketsAreCumulativeWithTheirLabels) {
  Histogram histogram({1, 2});
  for (const double value : {0.5, 1.0, 1.5, 3.0}) histogram.observe(value);
  EXPECT_EQ(histogram.text("h{route=\"/x\"}"),
            "h_bucket{route=\"/x\",le=\"1\"} 2\n"
            "h_bucket{route=\"/x\",le=\"2\"} 3\n"
            "h_bucket{route=\"/x\",le=\"+Inf\"} 4\n"
            "h_sum{route=\"/x\"} 6\n"
            "h_count{route=\"/x\"} 4\n");
}

TEST(ServeMetrics, MetricsCountRequestsTextsBatchesAndLatency) {
  test::RunningServer running;
  const int port = running.port;
  const auto res = post(port, "/translate", json{{"text", {"a dog .", "a cat ."}}}.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(post(port, "/translate", R"({"beam": 0, "text": "a"})")->status, 400);
  httplib::Client client("127.0.0.1", port);
  client.Get("/nope");
  const auto page = client.Get("/metrics");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metric(port, "nmt_http_requests_total{route=\"/translate\",status=\"200\"}"), 1);
  EXPECT_EQ(metric(port, "nmt_http_texts_total{route=\"/translate\",status=\"200\"}"), 2);
  EXPECT_EQ(metric(port, "nmt_http_requests_total{route=\"/translate\",status=\"400\"}"), 1);
  EXPECT_EQ(metric(port, "nmt_http_requests_total{route=\"other\",status=\"404\"}"), 1);
  EXPECT_EQ(metric(port, "nmt_batch_texts_count"), 1);
  EXPECT_EQ(metric(port, "nmt_batch_texts_bucket{le=\"1\"}"), 0);
  EXPECT_EQ(metric(port, "nmt_batch_texts_bucket{le=\"2\"}"), 1);
  EXPECT_EQ(metric(port, "nmt_decode_seconds_count"), 1);
  EXPECT_EQ(metric(port, "nmt_request_seconds_count{route=\"/translate\"}"), 2);
  EXPECT_EQ(metric(port, "nmt_queue_depth"), 0);
  EXPECT_GE(metric(port, "nmt_connections"), 1);
  for (const char* reason : {"idle", "header_deadline", "body_deadline", "admission",
                             "client_connections", "rate", "key"}) {
    EXPECT_EQ(metric(port, std::string("nmt_rejected_total{reason=\"") + reason + "\"}"), 0)
        << reason;
  }
}

// --- the transport ---------------------------------------------------------------------------

TEST(ServeTransport, ATricklingClientIsClosedAtTheHeaderDeadlineWhileHealthAnswers) {
  ServeOptions options;
  options.header_timeout_s = 1;
  options.body_timeout_s = 1;
  options.http_threads = 2;
  test::RunningServer running(options);
  const int port = running.port;
  // Four clients trickle a header byte every 100 ms (each read arrives well within any per-read
  // timeout) and one trickles its body: the deadline is for the whole, so all are closed.
  std::vector<std::future<Clock::duration>> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(std::async(std::launch::async, [port] {
      return test::time_until_dropped(
          port, "POST /translate HTTP/1.1\r\nHost: x\r\nX-Slow: ", seconds(8), "abcdefgh");
    }));
  }
  slow.push_back(std::async(std::launch::async, [port] {
    return test::time_until_dropped(
        port, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"text\": \"",
        seconds(8), "abcdefgh");
  }));
  std::this_thread::sleep_for(milliseconds(300));
  httplib::Client client("127.0.0.1", port);
  const auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  for (auto& dropped : slow) EXPECT_LT(dropped.get(), seconds(3));
  // Beast closes the socket when the deadline fires and runs the handler that counts it after:
  // a client can see the close before the count.
  const auto header_deadline = "nmt_rejected_total{reason=\"header_deadline\"}";
  const auto body_deadline = "nmt_rejected_total{reason=\"body_deadline\"}";
  EXPECT_TRUE(test::wait_until(
      [&] { return metric(port, header_deadline) >= 4 && metric(port, body_deadline) >= 1; }));
  EXPECT_EQ(metric(port, header_deadline), 4);
  EXPECT_EQ(metric(port, body_deadline), 1);
  EXPECT_EQ(test::post_translate(port, R"({"text": "a dog ."})")->status, 200);
}

TEST(ServeTransport, WhenEveryRequestThreadIsBusyANewRequestGets503AndHealthStillAnswers) {
  ServeOptions options;
  options.http_threads = 1;
  options.batching.max_wait = milliseconds(4000);  // the one request thread waits this long
  test::RunningServer running(options);
  const int port = running.port;
  std::atomic<bool> first_answered{false};
  auto first = std::async(std::launch::async, [&] {
    auto res = test::post_translate(port, R"({"text": "a dog ."})");
    first_answered = true;
    return res ? res->status : -1;
  });
  ASSERT_TRUE(test::wait_until([&] { return metric(port, "nmt_http_threads_busy") == 1; }));
  const auto busy = test::post_translate(port, R"({"text": "a cat ."})");
  const bool before_first = !first_answered;
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503) << busy->body;
  EXPECT_TRUE(before_first) << "the 503 waited for the busy thread";
  EXPECT_EQ(busy->get_header_value("Retry-After"), "1");
  EXPECT_NE(error_of(busy).find("--http-threads"), std::string::npos) << busy->body;
  httplib::Client client("127.0.0.1", port);
  const auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_FALSE(first_answered) << "/health waited for the busy thread";
  EXPECT_EQ(first.get(), 200);
  EXPECT_EQ(metric(port, "nmt_rejected_total{reason=\"admission\"}"), 1);
}

TEST(ServeTransport, ConnectionsFromOneAddressAreLimited) {
  ServeOptions options;
  options.max_client_connections = 3;
  test::RunningServer running(options);
  const int port = running.port;
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(test::connect_loopback(port));
  for (const int fd : held) ASSERT_GE(fd, 0);
  ASSERT_TRUE(test::wait_until([&] { return running.server.stats().queued == 0; }));
  const int extra = test::connect_loopback(port);
  ASSERT_GE(extra, 0);
  std::string answer;
  EXPECT_TRUE(test::closed_by_server(extra, milliseconds(5000), &answer));
  ::close(extra);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  EXPECT_NE(answer.find("--max-client-connections"), std::string::npos) << answer;
  for (const int fd : held) ::close(fd);
  // Their slots are free again once the server has seen them close; a probe that came before
  // that was the fourth connection and was turned away too.
  int refused_probes = 0;
  ASSERT_TRUE(test::wait_until([&] {
    const double open = metric(port, "nmt_connections");
    refused_probes += open < 0;
    return open == 1;  // /metrics itself
  }));
  EXPECT_EQ(metric(port, "nmt_rejected_total{reason=\"client_connections\"}"), 1 + refused_probes);
}

// --- TLS ---------------------------------------------------------------------------------------

/// A self-signed certificate for 127.0.0.1 and its key, made with the openssl tool.
struct TestCertificate {
  test::TempDir dir{"serve_tls"};
  fs::path cert = dir / "cert.pem";
  fs::path key = dir / "key.pem";
  TestCertificate() {
    const std::string command =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext "
        "subjectAltName=IP:127.0.0.1 -keyout " +
        key.string() + " -out " + cert.string() + " > " + (dir / "log").string() + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << test::read_text(dir / "log");
  }
};

TEST(ServeTls, HttpsAnswersAsHttpDoesAndCurlVerifiesTheCertificate) {
  TestCertificate tls;
  ServeOptions options;
  options.tls_cert = tls.cert.string();
  options.tls_key = tls.key.string();
  test::RunningServer https(options);
  test::RunningServer plain;
  ASSERT_TRUE(https.server.tls());
  httplib::SSLClient client("127.0.0.1", https.port);
  client.set_ca_cert_path(tls.cert.c_str());
  client.enable_server_certificate_verification(true);
  client.set_read_timeout(30, 0);
  const auto sentences = test::serve_sentences();
  for (const auto& request :
       {json{{"text", sentences}}, json{{"text", sentences}, {"beam", 3}, {"nbest", 2}}}) {
    const auto secure = client.Post("/translate", request.dump(), "application/json");
    ASSERT_TRUE(secure) << httplib::to_string(secure.error());
    EXPECT_EQ(secure->status, 200) << secure->body;
    const auto clear = test::post_translate(plain.port, request.dump());
    ASSERT_TRUE(clear);
    EXPECT_EQ(json::parse(secure->body), json::parse(clear->body));
  }
  const auto bad = client.Post("/translate", R"({"text": "a", "beam": 0})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  // curl, verifying the certificate, and refusing it without the CA.
  const auto out = tls.dir / "curl.out";
  const std::string url = "https://127.0.0.1:" + std::to_string(https.port) + "/health";
  EXPECT_EQ(std::system(("curl -sS --max-time 20 --cacert " + tls.cert.string() + " " + url +
                         " > " + out.string() + " 2>&1")
                            .c_str()),
            0)
      << test::read_text(out);
  EXPECT_EQ(json::parse(test::read_text(out))["status"], "ok");
  EXPECT_NE(std::system(("curl -sS --max-time 20 " + url + " > /dev/null 2>&1").c_str()), 0);
  // Plain HTTP to the HTTPS port gets no answer as HTTP.
  httplib::Client wrong("127.0.0.1", https.port);
  wrong.set_read_timeout(5, 0);
  const auto cleartext = wrong.Get("/health");
  EXPECT_TRUE(!cleartext || cleartext->status != 200);
}

TEST(ServeTls, ABadCertificateOrKeyIsAnErrorNamingTheFileAndLine) {
  TestCertificate tls;
  const auto dir = tls.dir.path();
  const auto cert_text = test::read_text(tls.cert);
  write_file(dir / "empty.pem", "not a certificate\n");
  write_file(dir / "broken.pem",
             "# a comment\n" + cert_text.substr(0, 120) + "@@@@\n-----END CERTIFICATE-----\n");
  write_file(dir / "unended.pem", "\n" + cert_text.substr(0, 200));
  test::TempDir other("serve_tls_other");
  const auto other_key = other / "key.pem";
  ASSERT_EQ(
      std::system(("openssl genrsa -out " + other_key.string() + " 2048 2>/dev/null").c_str()), 0);
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {(dir / "empty.pem").string(), tls.key.string(),
       "--tls-cert " + (dir / "empty.pem").string() + ":1: no '-----BEGIN"},
      {(dir / "broken.pem").string(), tls.key.string(),
       "--tls-cert " + (dir / "broken.pem").string() + ":2: the CERTIFICATE block begun here"},
      {(dir / "unended.pem").string(), tls.key.string(),
       (dir / "unended.pem").string() + ":2: the block begun here has no END line"},
      {tls.cert.string(), tls.cert.string(),
       "--tls-key " + tls.cert.string() + ":1: a 'CERTIFICATE' block, but a PEM private key"},
      {tls.cert.string(), other_key.string(), "is not the key of --tls-cert"},
      {tls.cert.string(), (dir / "missing.pem").string(), "missing.pem: cannot read the file"},
      {tls.cert.string(), "", "--tls-cert and --tls-key go together"},
  };
  for (const auto& [cert, key, needle] : cases) {
    ServeOptions options;
    options.port = 0;
    options.tls_cert = cert;
    options.tls_key = key;
    test::expect_error([&] { TranslationServer server(test::served_model(), options); }, needle);
  }
}

// --- the command line: SIGHUP ----------------------------------------------------------------

TEST(ServeCli, SighupReadsTheKeyFileAgainAndKeepsTheOldKeysWhenItIsBad) {
  const auto dir = test::temp_dir("serve_sighup");
  const auto keys = dir / "keys";
  write_file(keys, kKeyA + "\n");
  auto child = test::spawn_serve({"--checkpoint", test::serve_checkpoint().string(), "--device",
                                  "cpu", "--port", "0", "--api-keys", keys.string()},
                                 dir / "stderr");
  const int port = test::port_in(test::first_line(child.out));
  if (port == 0) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    FAIL() << test::read_text(dir / "stderr");
  }
  const std::string body = R"({"text": "a dog ."})";
  const auto status_with = [&](const std::string& key) {
    const auto res = post(port, "/translate", body, key);
    return res ? res->status : -1;
  };
  EXPECT_EQ(status_with(kKeyA), 200);
  EXPECT_EQ(status_with(kKeyB), 401);
  const auto stderr_has = [&](const std::string& needle) {
    return test::wait_until(
        [&] { return test::read_text(dir / "stderr").find(needle) != std::string::npos; });
  };
  write_file(keys, kKeyB + "\n");
  ASSERT_EQ(::kill(child.pid, SIGHUP), 0);
  EXPECT_TRUE(stderr_has("SIGHUP: API keys read again from " + keys.string()));
  EXPECT_EQ(status_with(kKeyB), 200);
  EXPECT_EQ(status_with(kKeyA), 401);
  write_file(keys, kKeyA + "\nshort\n");
  ASSERT_EQ(::kill(child.pid, SIGHUP), 0);
  EXPECT_TRUE(stderr_has("SIGHUP: the old API keys stay: --api-keys " + keys.string() + ":2:"));
  EXPECT_EQ(status_with(kKeyB), 200);
  EXPECT_EQ(status_with(kKeyA), 401);
  ASSERT_EQ(::kill(child.pid, SIGTERM), 0);
  const int status = test::wait_for_exit(child.pid);
  ::close(child.out);
  const auto err = test::read_text(dir / "stderr");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
  EXPECT_EQ(err.find(kKeyA), std::string::npos) << "a key in the log: " << err;
  EXPECT_EQ(err.find(kKeyB), std::string::npos) << "a key in the log: " << err;
}

TEST(ServeCli, ABadKeyFileStopsTheStartNamingItsLine) {
  const auto dir = test::temp_dir("serve_bad_keys");
  write_file(dir / "keys", "\n" + kKeyA + " 10 lots\n");
  const auto result = test::run_nmt("serve --device cpu --port 0 --checkpoint " +
                                        test::serve_checkpoint().string() + " --api-keys " +
                                        (dir / "keys").string(),
                                    "", dir);
  EXPECT_NE(result.code, 0);
  EXPECT_NE(result.err.find((dir / "keys").string() +
                            ":2: the characters per minute must be a whole number >= 0"),
            std::string::npos)
      << result.err;
}

// --- the page --------------------------------------------------------------------------------

// A server started with --api-keys: the page asks for the key, shows a wrong one's 401 in words,
// and keeps the right one for the session (tests/browser/page_test.py --api-key).
TEST(ServePage, AsksForTheKeyOnceAndKeepsItForTheSession) {
  if (const std::string missing = test::missing_browser(); !missing.empty()) {
    if (std::getenv("CI") != nullptr) FAIL() << missing << " is missing (scripts/setup.sh)";
    GTEST_SKIP() << missing << " is missing: scripts/setup.sh installs the browser test's packages";
  }
  KeyedServer server(kKeyA + "\n");
  EXPECT_EQ(test::run_page_test(server.port(), "serve_page_key", "--api-key " + kKeyA), "");
}

}  // namespace
}  // namespace nmt

#endif  // NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
