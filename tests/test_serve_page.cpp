// nmt serve's page (GET /) and the attention map it draws (POST /attention); the page itself in
// a real browser (tests/browser/page_test.py: headless Chromium through Selenium).
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "decode/alignment.h"
#include "decode/evaluation.h"
#include "serve_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using test::RunningServer;

TEST(ServePage, GetSlashIsTheSelfContainedPage) {
  RunningServer running;
  httplib::Client client("127.0.0.1", running.port);
  const auto res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(res->body.find("<textarea id=\"source\""), std::string::npos);
  // Nothing from elsewhere: no external script, style, font or image, and a policy that says so.
  EXPECT_EQ(res->body.find("http://"), std::string::npos);
  EXPECT_EQ(res->body.find("https://"), std::string::npos);
  EXPECT_NE(res->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  EXPECT_EQ(client.Post("/", "", "text/plain")->status, 405);
}

TEST(ServePage, AttentionIsTheSvgOfTheTranslationsCrossAttention) {
  RunningServer running;
  httplib::Client client("127.0.0.1", running.port);
  client.set_read_timeout(30, 0);
  const auto res =
      client.Post("/attention", json{{"text", "a dog runs ."}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_LT(res->body.find("<svg xmlns="), 60u) << res->body.substr(0, 80);
  EXPECT_NE(res->body.find("&lt;/s&gt;"), std::string::npos);  // the eos column, escaped
  const auto bad_head =
      client.Post("/attention", json{{"text", "a dog ."}, {"head", 99}}.dump(), "application/json");
  EXPECT_EQ(bad_head->status, 400);
  EXPECT_NE(bad_head->body.find("head"), std::string::npos) << bad_head->body;
  const auto no_text = client.Post("/attention", json{{"layer", 0}}.dump(), "application/json");
  EXPECT_EQ(no_text->status, 400);
  const auto empty = client.Post("/attention", json{{"text", ""}}.dump(), "application/json");
  EXPECT_EQ(empty->status, 400);
}

// POST /score is `nmt score` over HTTP: the same teacher-forced scores, in order.
TEST(ServeScore, ScoresArePairsForcedDecodingInOrder) {
  RunningServer running;
  httplib::Client client("127.0.0.1", running.port);
  client.set_read_timeout(30, 0);
  const std::vector<std::string> src = {"a dog runs .", "two men are playing football ."};
  const std::vector<std::string> tgt = {"ein hund rennt .", "zwei männer spielen fußball ."};
  const auto res =
      client.Post("/score", json{{"src", src}, {"tgt", tgt}}.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto scores = json::parse(res->body)["scores"];
  ASSERT_EQ(scores.size(), 2u);
  auto served = test::served_model();
  std::vector<Example> examples;
  for (size_t i = 0; i < src.size(); ++i) {
    examples.push_back({served.tokenizer.encode_src(src[i]), served.tokenizer.encode_tgt(tgt[i])});
  }
  const auto expected = teacher_forced_scores(served.model, examples, 4096, at::kCPU);
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_DOUBLE_EQ(scores[i]["log_prob"].get<double>(), expected[i].log_prob) << i;
    EXPECT_EQ(scores[i]["tokens"].get<int64_t>(), expected[i].tokens) << i;
    EXPECT_DOUBLE_EQ(scores[i]["mean"].get<double>(), expected[i].mean()) << i;
  }
  const auto uneven =
      client.Post("/score", json{{"src", src}, {"tgt", "ein hund ."}}.dump(), "application/json");
  EXPECT_EQ(uneven->status, 400);
  EXPECT_NE(uneven->body.find("one target per source"), std::string::npos) << uneven->body;
  std::string longer;
  for (int i = 0; i < 200; ++i) longer += "dog ";
  const auto too_long = client.Post("/score", json{{"src", longer}, {"tgt", "ein hund ."}}.dump(),
                                    "application/json");
  EXPECT_EQ(too_long->status, 400);
  EXPECT_NE(too_long->body.find("pair 1"), std::string::npos) << too_long->body;
}

// "alignment": true gives each translation its Pharaoh alignment, as translate --alignment.
TEST(ServeAlignment, TranslateAnswersThePairsOfEachHypothesis) {
  RunningServer running;
  const std::vector<std::string> texts = {"a dog runs .", "two men are playing football ."};
  const auto res = test::post_translate(
      running.port, json{{"text", texts}, {"alignment", true}, {"beam", 2}, {"nbest", 2}}.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto translations = json::parse(res->body)["translations"];
  auto served = test::served_model();
  DecodeConfig decode = served.config.decode;
  decode.beam = decode.nbest = 2;
  Translator translator(served.model, served.tokenizer, decode, at::kCPU);
  const auto results = translator.translate(texts);
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(translations[i]["nbest"].size(), results[i].nbest.size());
    for (size_t k = 0; k < results[i].nbest.size(); ++k) {
      const auto& tokens = results[i].nbest[k].tokens;
      const std::string expected =
          tokens.empty()
              ? ""
              : pharaoh(align_words(attention_map(translator.teacher_forcing(), texts[i], tokens)));
      EXPECT_EQ(translations[i]["nbest"][k]["alignment"], expected) << i << " " << k;
    }
    EXPECT_EQ(translations[i]["alignment"], translations[i]["nbest"][0]["alignment"]);
  }
  const auto bad = test::post_translate(running.port, json{{"text", "a"}, {"alignment", 1}}.dump());
  EXPECT_EQ(bad->status, 400);
}

// "prefix" and "constraints" per text, shaped like "text"; the same outputs as the Translator
// gives with those guides, and a guide the server cannot use is a 400 naming the text.
TEST(ServeGuides, PrefixAndConstraintsPerTextAndTheirErrors) {
  RunningServer running;
  const std::vector<std::string> texts = {"a dog runs .", "two men are playing football ."};
  const auto res = test::post_translate(
      running.port, json{{"text", texts},
                         {"beam", 4},
                         {"prefix", json::array({"ein", ""})},
                         {"constraints", json::array({json::array(), json::array({"hund"})})}}
                        .dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto translations = json::parse(res->body)["translations"];
  auto served = test::served_model();
  DecodeConfig decode = served.config.decode;
  decode.beam = 4;
  Translator translator(served.model, served.tokenizer, decode, at::kCPU);
  translator.set_log(nullptr);
  const auto expected = translator.translate(texts, 1,
                                             {encode_guide(served.tokenizer, "ein", {}, ""),
                                              encode_guide(served.tokenizer, "", {"hund"}, "")});
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(translations[i], expected[i].best()) << i;
  EXPECT_EQ(expected[0].best().rfind("ein", 0), 0u) << expected[0].best();
  EXPECT_NE(expected[1].best().find("hund"), std::string::npos) << expected[1].best();

  const auto one = test::post_translate(
      running.port,
      json{{"text", "a dog ."}, {"prefix", "ein"}, {"constraints", json::array({"hund"})}}.dump());
  ASSERT_EQ(one->status, 200) << one->body;
  const auto bad = [&](const json& body, const std::string& needle) {
    const auto answer = test::post_translate(running.port, body.dump());
    EXPECT_EQ(answer->status, 400) << body.dump();
    const auto error = json::parse(answer->body)["error"].get<std::string>();
    EXPECT_NE(error.find(needle), std::string::npos) << error;
  };
  bad(json{{"text", texts}, {"prefix", "ein"}}, "\"prefix\" must be a list of strings");
  bad(json{{"text", texts}, {"prefix", json::array({"ein"})}},
      "\"prefix\" has 1 entries but \"text\" 2");
  bad(json{{"text", "a dog ."}, {"constraints", json::array({""})}},
      "text[0]\": constraint 1 is empty");
  bad(json{{"text", "a dog ."}, {"constraints", json::array({"日本"})}}, "cannot be encoded");
  bad(json{{"text", "a dog ."},
           {"constraints", json::array({"hund"})},
           {"max_len_offset", 1},
           {"prefix", "ein mann hund ein mann hund ein mann hund"}},
      "text[0]\": the prefix has");
}

// Types two lines and presses Ctrl+Enter, compares the page with /translate, then the
// alternatives, markup shown as text, the attention map, a file round trip and a 413 in words
// (tests/browser/page_test.py). Screenshots: <build>/tests/artifacts/serve_page/.
TEST(ServePage, WorksInAHeadlessBrowser) {
  if (const std::string missing = test::missing_browser(); !missing.empty()) {
    if (std::getenv("CI") != nullptr) FAIL() << missing << " is missing (scripts/setup.sh)";
    GTEST_SKIP() << missing << " is missing: scripts/setup.sh installs the browser test's packages";
  }
  ServeOptions options;
  options.limits.max_text_bytes = 300;  // step 6 sends a longer line
  RunningServer running(options);
  EXPECT_EQ(test::run_page_test(running.port, "serve_page"), "");
  EXPECT_TRUE(fs::exists(fs::current_path() / "artifacts" / "serve_page" / "02_translated.png"));
}

}  // namespace
}  // namespace nmt

#endif  // NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
