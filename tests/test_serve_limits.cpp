// nmt serve against bad clients: every class of bad request gets its status and a message naming
// the field; a full queue answers 503; a silent client is dropped; SIGTERM to a spawned
// `nmt serve` answers the queued requests and exits 0.
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "serve_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct BadRequest {
  std::string body;
  int status;
  std::string needle;  ///< part of the "error" message
};

TEST(ServeLimits, EachBadRequestGetsItsStatusAndNamesTheField) {
  TranslationServer server(test::served_model(), [] {
    ServeOptions options;
    options.port = 0;
    return options;
  }());
  const int port = server.start();
  json many = json::array();
  for (int i = 0; i < 257; ++i) many.push_back("a dog .");
  const std::vector<BadRequest> cases = {
      {"{\"text\": ", 400, "malformed JSON"},
      {"[\"a dog .\"]", 400, "JSON object"},
      {"{}", 400, "missing field \"text\""},
      {R"({"text": 5})", 400, "\"text\" must be a string or a list"},
      {R"({"text": ["a", 3]})", 400, "\"text[1]\" must be a string"},
      {R"({"text": "a", "beam": "5"})", 400, "\"beam\" must be an integer"},
      {R"({"text": "a", "beam": 2.5})", 400, "\"beam\" must be an integer"},
      {R"({"text": "a", "beam": 99999999999999999999})", 400, "\"beam\" must be an integer"},
      {R"({"text": "a", "beam": 0})", 400, "beam = 0 is out of range"},
      {R"({"text": "a", "beam": 33})", 400, "--max-beam"},
      {R"({"text": "a", "beam": 2, "nbest": 3})", 400, "nbest = 3 is out of range"},
      {R"({"text": "a", "length_penalty": -1})", 400, "length_penalty = -1"},
      {R"({"text": "a", "length_penalty": "x"})", 400, "\"length_penalty\" must be a number"},
      {R"({"text": "a", "max_len_offset": 0})", 400, "max_len_offset = 0"},
      {R"({"text": "a", "no_repeat_ngram_size": -1})", 400, "no_repeat_ngram_size = -1 is out"},
      {R"({"text": "a", "no_repeat_ngram_size": 1.5})", 400, "must be an integer"},
      {R"({"text": "a", "repetition_penalty": 0.5})", 400, "repetition_penalty = 0.5 is out"},
      {R"({"text": "a", "repetition_penalty": "x"})", 400, "\"repetition_penalty\" must be a"},
      {R"({"text": "a", "scores": 1})", 400, "\"scores\" must be true or false"},
      {R"({"text": "a", "beem": 2})", 400, "unknown field \"beem\""},
      {"{\"text\": \"bad \xff byte\"}", 400, "not valid UTF-8 (byte 15)"},
      {R"({"text": "\udc00"})", 400, "malformed JSON"},  // a lone surrogate
      {std::string(100000, '['), 400, "nests deeper than 8"},
      {json{{"text", std::string(100001, 'a')}}.dump(), 413, "\"text[0]\" has 100001 bytes"},
      {json{{"text", many}}.dump(), 413, "--max-texts"},
      {std::string(2 << 20, ' '), 413, "--max-body-bytes"},
  };
  for (const auto& bad : cases) {
    const auto res = test::post_translate(port, bad.body);
    const auto shown = bad.body.substr(0, 60);
    ASSERT_TRUE(res) << shown << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, bad.status) << shown << " -> " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << shown;
    const auto message = json::parse(res->body)["error"].get<std::string>();
    EXPECT_NE(message.find(bad.needle), std::string::npos) << shown << " -> " << message;
  }
  httplib::Client client("127.0.0.1", port);
  const auto missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("no route /nope"), std::string::npos) << missing->body;
  for (const auto& [res, allow] : {std::pair{client.Get("/translate"), "POST"},
                                   {client.Post("/health", "", "text/plain"), "GET"},
                                   {client.Delete("/info"), "GET"}}) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 405) << res->body;
    EXPECT_EQ(res->get_header_value("Allow"), allow);
  }
  // A 2 MB header is refused before anything is parsed.
  httplib::Headers huge{{"X-Filler", std::string(2 << 20, 'h')}};
  const auto too_big = client.Post("/translate", huge, R"({"text": "a"})", "application/json");
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->status, 400);
  EXPECT_NE(too_big->body.find("headers are larger than this server's limit"), std::string::npos)
      << too_big->body;
  // Still serving, and nothing reached the decoder.
  const auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["requests"], 0);
  const auto info = json::parse(client.Get("/info")->body);
  EXPECT_EQ(info["model"]["d_model"], 32);
  EXPECT_EQ(info["vocabulary"]["source"], test::fixture_tokenizer().src_vocab_size());
  EXPECT_EQ(info["decode"]["beam"], 1);
  EXPECT_EQ(info["checkpoint"], test::serve_checkpoint().string());
  EXPECT_EQ(info["languages"]["pairs"], json::array({"en-de"}));
  // "tgt_lang": the model's own target translates; another is a 400, never output.
  const auto own =
      client.Post("/translate", R"({"text": "a dog .", "tgt_lang": "de"})", "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  const auto other =
      client.Post("/translate", R"({"text": "a dog .", "tgt_lang": "fr"})", "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 400);
  EXPECT_NE(other->body.find("not trained to translate into 'fr'; its pairs are en-de"),
            std::string::npos)
      << other->body;
  const auto wrong =
      client.Post("/translate", R"({"text": "a dog .", "tgt_lang": 7})", "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 400);
  EXPECT_NE(json::parse(wrong->body)["error"].get<std::string>().find(
                "\"tgt_lang\" must be a language code string"),
            std::string::npos)
      << wrong->body;
}

TEST(ServeLimits, FullQueueAnswers503) {
  ServeOptions options;
  options.port = 0;
  options.batching.capacity = 1;
  options.batching.max_wait = milliseconds(1500);  // the first request waits in the queue
  TranslationServer server(test::served_model(), options);
  const int port = server.start();
  int first = 0;
  std::thread waiting([&] {
    const auto res = test::post_translate(port, R"({"text": "a dog ."})");
    first = res ? res->status : -1;
  });
  EXPECT_TRUE(test::wait_until([&] { return server.stats().queued == 1; }));
  const auto refused = test::post_translate(port, R"({"text": "a cat ."})");
  waiting.join();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_NE(refused->body.find("queue is full"), std::string::npos) << refused->body;
  EXPECT_EQ(first, 200);
}

// The server tokenizes each text once, when the request arrives (encode_texts); a text the
// tokenizer refuses is the client's fault: 400, naming the text, not a 500 for the whole batch.
TEST(ServeLimits, ATextTheTokenizerRefusesIsA400NamingItsIndex) {
  int calls = 0;
  const LineEncoder encode = [&](const std::string& text, size_t line_number) {
    ++calls;
    if (text == "refused") throw Error("SentencePiece cannot encode 'refused': bad input");
    SourceLine line;
    line.ids = {int64_t(line_number)};
    return line;
  };
  const auto lines = encode_texts({"a", "b"}, encode);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].ids, std::vector<int64_t>{2});
  EXPECT_EQ(calls, 2);
  try {
    encode_texts({"a", "b", "refused", "c"}, encode);
    ADD_FAILURE() << "expected a RequestError";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_STREQ(e.what(),
                 "\"text[2]\" cannot be tokenized: SentencePiece cannot encode 'refused': bad "
                 "input");
  }
}

TEST(ServeLimits, SilentClientsAreDroppedWhileOthersAreServed) {
  ServeOptions options;
  options.port = 0;
  options.header_timeout_s = 1;
  options.body_timeout_s = 1;
  options.keep_alive_s = 1;  // after the 400 for a cut body, the connection idles this long
  options.http_threads = 4;
  TranslationServer server(test::served_model(), options);
  const int port = server.start();
  // Two stuck in the headers, two in the body: all four connection threads are taken.
  std::vector<std::thread> slow;
  std::vector<Clock::duration> dropped(4);
  for (size_t i = 0; i < 4; ++i) {
    slow.emplace_back([&, i] {
      const std::string partial =
          i < 2 ? "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Le"
                : "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"te";
      dropped[i] = test::time_until_dropped(port, partial, std::chrono::seconds(8));
    });
  }
  std::this_thread::sleep_for(milliseconds(100));
  const auto res = test::post_translate(port, R"({"text": "a dog ."})");
  for (auto& thread : slow) thread.join();
  for (const auto& time : dropped) EXPECT_LT(time, std::chrono::seconds(4));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(ServeCli, SigtermAnswersTheQueuedRequestsAndExitsZero) {
  const auto dir = test::temp_dir("serve_sigterm");
  auto child = test::spawn_serve({"--checkpoint", test::serve_checkpoint().string(), "--device",
                                  "cpu", "--port", "0", "--max-wait-ms", "8000", "--workers", "2"},
                                 dir / "stderr");
  const auto line = test::first_line(child.out);
  EXPECT_NE(line.find("2 decoding worker(s)"), std::string::npos) << line;
  const int port = test::port_in(line);
  if (port == 0) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    FAIL() << "no port in: " << line;
  }
  const auto sentences = test::serve_sentences();
  std::vector<std::string> answers(3);
  std::vector<std::thread> clients;
  for (size_t c = 0; c < 3; ++c) {
    clients.emplace_back([&, c] {
      const auto res = test::post_translate(port, json{{"text", sentences[c]}}.dump());
      if (res && res->status == 200) answers[c] = json::parse(res->body)["translations"][0];
    });
  }
  httplib::Client health("127.0.0.1", port);
  const bool queued = test::wait_until([&] {
    const auto res = health.Get("/health");
    return res && json::parse(res->body)["queued"] == 3;
  });
  EXPECT_TRUE(queued);
  EXPECT_EQ(::kill(child.pid, SIGTERM), 0);
  for (auto& client : clients) client.join();
  const std::string err = test::expect_clean_exit(child, dir / "stderr");
  EXPECT_NE(err.find("answering 3 queued request(s)"), std::string::npos) << err;
  Translator translator(test::served_model().model, test::fixture_tokenizer(),
                        test::fixture_config().decode, at::kCPU);
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(answers[c], translator.translate({sentences[c]})[0].best()) << c;
  }
}

// The kernel hands a process's signal to any thread that does not block it, and libraries start
// threads before main (OpenBLAS's pool): a SIGTERM that lands on one of them drains the server
// too. The oldest thread besides the main one gets it.
TEST(ServeCli, ASigtermOnAnyThreadDrainsAndExitsZero) {
  const auto dir = test::temp_dir("serve_sigterm_thread");
  auto child = test::spawn_serve({"--checkpoint", test::serve_checkpoint().string(), "--device",
                                  "cpu", "--port", "0", "--workers", "2"},
                                 dir / "stderr");
  const auto line = test::first_line(child.out);
  ASSERT_NE(test::port_in(line), 0) << line;
  std::vector<pid_t> threads;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(child.pid) + "/task")) {
    const pid_t tid = std::stoi(task.path().filename().string());
    if (tid != child.pid) threads.push_back(tid);
  }
  std::sort(threads.begin(), threads.end());  // the oldest first: those started before main
  ASSERT_FALSE(threads.empty());
  EXPECT_EQ(::syscall(SYS_tgkill, child.pid, threads.front(), SIGTERM), 0);
  const std::string err = test::expect_clean_exit(child, dir / "stderr");
  EXPECT_NE(err.find("signal 15: not accepting new connections"), std::string::npos) << err;
}

TEST(ServeCli, WorkersOutOfRangeIsAnErrorNamingTheOption) {
  const auto dir = test::temp_dir("serve_workers");
  // Checked before anything listens; the timeout and --port 0 are a safety net if not.
  const std::string command =
      "timeout 60 " + std::string(NMT_BINARY) + " serve --device cpu --port 0 --checkpoint " +
      test::serve_checkpoint().string() + " --workers 65 2> " + (dir / "err").string();
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
  std::ifstream in(dir / "err");
  const std::string err((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(err.find("--workers must be in 0..64 (0: automatic), got 65"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace nmt

#endif  // NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
