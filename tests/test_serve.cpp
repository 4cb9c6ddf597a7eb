// nmt serve in-process: a TranslationServer on an ephemeral loopback port, talked to with
// httplib::Client. Outputs against `nmt translate`, concurrency, shutdown with queued requests.
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "serve_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// `nmt translate ARGS` on `lines` (stdin); its stdout lines. Remembered per arguments and
/// lines: each test starts the binary only for what it has not seen.
std::vector<std::string> translate_cli(const std::string& args,
                                       const std::vector<std::string>& lines) {
  static std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::string>> seen;
  const auto key = std::make_pair(args, lines);
  if (const auto it = seen.find(key); it != seen.end()) return it->second;
  const auto dir = test::temp_dir("serve_translate_cli");
  std::ofstream(dir / "in.txt", std::ios::binary) << [&] {
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return text;
  }();
  const std::string command = std::string(NMT_BINARY) + " translate --device cpu --checkpoint " +
                              test::serve_checkpoint().string() + " " + args + " < " +
                              (dir / "in.txt").string() + " > " + (dir / "out.txt").string();
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  auto out = read_lines(dir / "out.txt");
  return seen[key] = out;
}

using test::RunningServer;

json post_ok(int port, const json& body) {
  const auto res = test::post_translate(port, body.dump());
  if (!res) {
    ADD_FAILURE() << "no response: " << httplib::to_string(res.error());
    return json::object();
  }
  EXPECT_EQ(res->status, 200) << res->body;
  return json::parse(res->body);
}

TEST(ServeHttp, GreedyOutputsEqualTranslateCli) {
  RunningServer running;
  const auto sentences = test::serve_sentences();
  const auto expected = translate_cli("", sentences);
  const auto response = post_ok(running.port, {{"text", sentences}});
  ASSERT_EQ(response["translations"].size(), sentences.size()) << response.dump();
  for (size_t i = 0; i < sentences.size(); ++i) {
    EXPECT_EQ(response["translations"][i], expected[i]) << i;
  }
  // One string in, a list of one out; the same sentence alone gives the same translation.
  const auto single = post_ok(running.port, {{"text", sentences[1]}});
  EXPECT_EQ(single["translations"], json::array({expected[1]}));
  EXPECT_EQ(post_ok(running.port, {{"text", json::array()}})["translations"], json::array());
}

TEST(ServeHttp, BeamNbestAndScoresEqualTranslateCli) {
  RunningServer running;
  const auto sentences = test::serve_sentences();
  const auto expected =
      translate_cli("--beam 3 --nbest 2 --length-penalty 1.0 --max-len 4", sentences);
  ASSERT_EQ(expected.size(), 2 * sentences.size());
  const auto response = post_ok(running.port, {{"text", sentences},
                                               {"beam", 3},
                                               {"nbest", 2},
                                               {"length_penalty", 1.0},
                                               {"max_len_offset", 4}});
  const auto& translations = response["translations"];
  ASSERT_EQ(translations.size(), sentences.size()) << response.dump();
  for (size_t i = 0; i < sentences.size(); ++i) {
    const auto& nbest = translations[i]["nbest"];
    EXPECT_EQ(translations[i]["text"], nbest[0]["text"]);
    for (size_t k = 0; k < 2; ++k) {
      const auto& line = expected[2 * i + k];  // "score<TAB>text"
      const auto tab = line.find('\t');
      if (line.rfind("-inf\t", 0) == 0) {  // fewer hypotheses (the blank input)
        EXPECT_LE(nbest.size(), k) << i;
        continue;
      }
      ASSERT_GT(nbest.size(), k) << i;
      EXPECT_EQ(nbest[k]["text"], line.substr(tab + 1)) << i << " " << k;
      EXPECT_NEAR(nbest[k]["score"].get<double>(), std::stod(line.substr(0, tab)), 1e-4);
    }
  }
  // Greedy with scores: objects with the best text and its score.
  const auto scored = post_ok(running.port, {{"text", sentences[0]}, {"scores", true}});
  EXPECT_EQ(scored["translations"][0]["text"], translate_cli("", {sentences[0]})[0]);
  EXPECT_LT(scored["translations"][0]["score"].get<double>(), 0.0);
}

// The repetition guards are request fields that decode as the command line's flags do.
TEST(ServeHttp, RepetitionGuardsEqualTranslateCli) {
  RunningServer running;
  const auto sentences = test::serve_sentences();
  for (const auto& [flags, fields] :
       {std::pair<std::string, json>{"--no-repeat-ngram-size 1", {{"no_repeat_ngram_size", 1}}},
        {"--beam 3 --repetition-penalty 3", {{"beam", 3}, {"repetition_penalty", 3.0}}}}) {
    json body = fields;
    body["text"] = sentences;
    EXPECT_EQ(post_ok(running.port, body)["translations"], json(translate_cli(flags, sentences)))
        << flags;
  }
  // The tiny model repeats itself: the guard changes its outputs.
  EXPECT_NE(translate_cli("--no-repeat-ngram-size 1", sentences), translate_cli("", sentences));
}

/// 8 clients × 50 requests against a server with `options`: every answer equals `nmt
/// translate`'s. Returns the server's counters.
BatchStats eight_clients_fifty_requests(ServeOptions options) {
  RunningServer running(options);
  const auto sentences = test::serve_sentences();
  const auto expected = translate_cli("", sentences);
  constexpr int kClients = 8, kRequests = 50;
  std::atomic<int> correct{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", running.port);
      client.set_read_timeout(30, 0);
      for (int r = 0; r < kRequests; ++r) {
        const size_t i = size_t(c * kRequests + r) % sentences.size();
        const auto res =
            client.Post("/translate", json{{"text", sentences[i]}}.dump(), "application/json");
        if (res && res->status == 200 &&
            json::parse(res->body)["translations"] == json::array({expected[i]})) {
          ++correct;
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(correct.load(), kClients * kRequests);
  // Counted before the answers go out; a worker may still be finishing its bookkeeping.
  EXPECT_TRUE(test::wait_until([&] { return running.server.stats().decoding == 0; }));
  const auto stats = running.server.stats();
  EXPECT_EQ(stats.requests, kClients * kRequests);
  return stats;
}

TEST(ServeHttp, ConcurrentClientsAreBatchedAndAllAnsweredCorrectly) {
  ServeOptions options;
  options.batching.max_wait = std::chrono::milliseconds(20);
  const auto stats = eight_clients_fifty_requests(options);
  // Requests were decoded together: fewer Translator calls than requests.
  EXPECT_LT(stats.batches, stats.requests);
  EXPECT_EQ(stats.peak_decoding, 1);
}

TEST(ServeHttp, TwoWorkersDecodeTwoBatchesAtOnceAndAnswerAllCorrectly) {
  ServeOptions options;
  options.batching.workers = 2;
  options.batching.threads = 1;
  // A budget of a few sentences: 8 waiting clients make several batches, for both workers.
  options.batching.max_batch_tokens = 24;
  options.batching.max_wait = std::chrono::milliseconds(20);
  const auto stats = eight_clients_fifty_requests(options);
  EXPECT_EQ(stats.peak_decoding, 2);
}

// --max-batch-tokens counts as decode.batch_tokens does (before padding): a text decodes
// (pieces + eos) × beam (or samples) rows × tokens.
TEST(ServeBatching, ARequestWeighsItsDecodedRows) {
  std::vector<SourceLine> lines(3);
  lines[0].ids = {4, 5, 6};
  lines[1].result.nbest.push_back({});  // a blank text: no model call
  lines[2].ids = {7};
  DecodeConfig decode;
  EXPECT_EQ(request_tokens(lines, decode), 4 + 2);
  decode.beam = 4;
  EXPECT_EQ(request_tokens(lines, decode), (4 + 2) * 4);
  decode.search = SearchKind::kSample;
  decode.sample = 3;
  EXPECT_EQ(request_tokens(lines, decode), (4 + 2) * 3);
}

TEST(ServeHttp, StopAnswersTheQueuedRequestsThenRefusesConnections) {
  ServeOptions options;
  options.batching.max_wait = std::chrono::milliseconds(8000);  // they wait in the queue
  RunningServer running(options);
  const auto sentences = test::serve_sentences();
  const auto expected = translate_cli("", sentences);
  std::vector<int> statuses(4, 0);
  std::vector<json> answers(4);
  std::vector<std::thread> clients;
  for (size_t c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      const auto res = test::post_translate(running.port, json{{"text", sentences[c]}}.dump());
      statuses[c] = res ? res->status : -1;
      if (res && res->status == 200) answers[c] = json::parse(res->body)["translations"];
    });
  }
  EXPECT_TRUE(test::wait_until([&] { return running.server.stats().queued == 4; }));
  const auto start = std::chrono::steady_clock::now();
  running.server.stop();  // does not wait out max_wait: closing decodes at once
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  for (auto& client : clients) client.join();
  for (size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(statuses[c], 200) << c;
    EXPECT_EQ(answers[c], json::array({expected[c]})) << c;
  }
  httplib::Client late("127.0.0.1", running.port);
  late.set_connection_timeout(1, 0);
  EXPECT_FALSE(late.Get("/health"));
}

// "split" and "format" as translate's --split and --format: a paragraph and an HTML document
// come back as `nmt translate` gives them; what does not combine is a 400 naming the fields.
TEST(ServeHttp, ParagraphsAndHtmlDocumentsAreTranslatedAsTranslateDoes) {
  RunningServer running;
  const std::vector<std::string> texts = {"A dog runs .  A man is here .", "",
                                          "<p>a <b>man</b> .</p>"};
  const auto paragraph = post_ok(running.port, {{"text", json::array({texts[0], texts[1]})}});
  EXPECT_EQ(paragraph["translations"], json(translate_cli("", {texts[0], texts[1]})));
  const auto whole = post_ok(running.port, {{"text", texts[0]}, {"split", "none"}});
  EXPECT_EQ(whole["translations"][0], translate_cli("--split none", {texts[0]})[0]);
  const auto html = post_ok(running.port, {{"text", texts[2]}, {"format", "html"}});
  EXPECT_EQ(html["translations"][0], translate_cli("--format html", {texts[2]})[0]);
  const auto refused = [&](const json& body, const std::string& message) {
    const auto res = test::post_translate(running.port, body.dump());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find(message), std::string::npos) << res->body;
  };
  refused({{"text", "x"}, {"split", "words"}},
          "\\\"split\\\" = \\\"words\\\" is not valid: choose one of sentences, none");
  refused({{"text", "x"}, {"format", "html"}, {"alignment", true}},
          "\\\"alignment\\\" works on plain texts");
}

}  // namespace
}  // namespace nmt

#endif  // NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
