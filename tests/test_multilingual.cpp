// Several language pairs in one model (issue 59): per-entry languages, target-language tags,
// sampling across pairs by temperature, per-pair validation and choosing the target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
#include <httplib.h>

#include "serve/server.h"
#include "serve_test_util.h"
#endif

#include "core/config.h"
#include "core/languages.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/language_tags.h"
#include "data/mixing.h"
#include "decode/translator.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/validation.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = NMT_FIXTURES_DIR;

/// "a b c" -> "c b a": a second target language made from the German fixture.
std::string reversed_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words{std::istream_iterator<std::string>(in),
                                 std::istream_iterator<std::string>()};
  std::string out;
  for (auto it = words.rbegin(); it != words.rend(); ++it) out += (out.empty() ? "" : " ") + *it;
  return out;
}

/// A data.dir with tiny/tiny_val in en, de and "xx" (the German words reversed).
void write_three_languages(const fs::path& dir) {
  fs::create_directories(dir);
  for (const std::string split : {"tiny", "tiny_val"}) {
    fs::copy_file(kFixtures / (split + ".en"), dir / (split + ".en"));
    fs::copy_file(kFixtures / (split + ".de"), dir / (split + ".de"));
    std::ifstream in(kFixtures / (split + ".de"));
    std::ofstream out(dir / (split + ".xx"));
    for (std::string line; std::getline(in, line);) out << reversed_words(line) << "\n";
  }
}

CorpusSpec split_into(const std::string& split, const std::string& tgt_lang) {
  CorpusSpec spec = CorpusSpec::of_split(split);
  spec.tgt_lang = tgt_lang;
  return spec;
}

/// tiny_config over en->de and en->xx with tags at `where`.
Config two_pair_config(const fs::path& data_dir, const fs::path& run_dir, LangTag where) {
  Config config = test::tiny_config(run_dir);
  config.data.dir = data_dir.string();
  config.data.train = {split_into("tiny", "de"), split_into("tiny", "xx")};
  config.data.valid = {CorpusSpec::of_split("tiny_val")};
  config.data.lang_tag = where;
  return config;
}

TEST(Languages, EntriesNameTheirPairsAndAValidationSplitServesEveryPair) {
  const json file = {
      {"data",
       {{"train",
         {{{"split", "train"}, {"tgt_lang", "de"}},
          {{"split", "train"}, {"tgt_lang", "fr"}, {"weight", 2}},
          {{"src", "a.en"}, {"tgt", "a.cs"}, {"src_lang", "en"}, {"tgt_lang", "cs"}}}},
        {"valid", "val"},
        {"lang_tag", "source"}}}};
  const Config config = config_from_json(file, "ml.json");
  EXPECT_NO_THROW(config.validate());
  const auto pairs = trained_pairs(config.data);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(describe_pairs(pairs), "en-de, en-fr, en-cs");
  EXPECT_EQ(target_languages(config.data), (std::vector<std::string>{"de", "fr", "cs"}));
  EXPECT_EQ(tag_pieces(config.data), (std::vector<std::string>{"<2de>", "<2fr>", "<2cs>"}));
  const auto valid = corpora_per_pair(config.data, config.data.valid);
  ASSERT_EQ(valid.size(), 3u);
  EXPECT_EQ(corpus_pair(config.data, valid[1]).name(), "en-fr");
  EXPECT_EQ(valid[1].describe(), "split 'val' (en->fr)");
  // Written as read: the entries keep their languages, a plain split stays a name.
  const json written = config_to_json(config);
  EXPECT_EQ(written["data"]["train"], file["data"]["train"]);
  EXPECT_EQ(config_from_json(written, "again").data.train, config.data.train);
  // One pair: nothing changes (no tags, validation as given).
  const Config bilingual;
  EXPECT_FALSE(multilingual(bilingual.data));
  EXPECT_TRUE(tag_pieces(bilingual.data).empty());
  EXPECT_EQ(corpora_per_pair(bilingual.data, bilingual.data.valid), bilingual.data.valid);
}

TEST(Languages, BadPairsAreOneClearError) {
  Config config = two_pair_config("d", "r", LangTag::kNone);
  test::expect_error([&] { config.validate(); },
                     "data.lang_tag = none, but data.train has 2 target languages (en-de, en-xx)");
  config.data.lang_tag = LangTag::kSource;
  EXPECT_NO_THROW(config.validate());
  config.data.valid = {split_into("tiny_val", "de")};
  test::expect_error([&] { config.validate(); },
                     "data.valid has no validation corpus for the pair en-xx");
  config.data.valid = {CorpusSpec::of_split("tiny_val"), split_into("tiny_val", "fr")};
  test::expect_error([&] { config.validate(); }, "is en-fr, a pair data.train does not train");
  config.data.valid = {CorpusSpec::of_split("tiny_val")};
  config.data.train[1].tgt_lang = "x y";
  test::expect_error([&] { config.validate(); }, "data.train[1].tgt_lang = 'x y' is not a valid");
  config.data.train[1].tgt_lang = "en";
  test::expect_error([&] { config.validate(); }, "translates 'en' into itself");
  config.data.train[1].tgt_lang = "xx";
  config.data.sampling_temperature = 0.0;
  test::expect_error([&] { config.validate(); }, "data.sampling_temperature = 0 is out of range");
  // Choosing a target: the model's pairs, never output for another.
  EXPECT_EQ(resolve_pair(config.data, "xx", "--tgt-lang").name(), "en-xx");
  test::expect_error([&] { resolve_pair(config.data, "fr", "--tgt-lang"); },
                     "--tgt-lang = 'fr': the model was not trained to translate into 'fr'; its "
                     "pairs are en-de, en-xx");
  test::expect_error([&] { resolve_pair(config.data, "", "--tgt-lang"); },
                     "the model translates en-de, en-xx: choose the target with --tgt-lang");
  EXPECT_EQ(resolve_pair(Config().data, "", "--tgt-lang").name(), "en-de");
}

TEST(Mixing, SamplingTemperatureFlattensThePairsShares) {
  DataConfig data = two_pair_config("d", "r", LangTag::kSource).data;
  const auto parts_of = [](size_t big, size_t small) {
    std::vector<CorpusPart> parts(2);
    parts[0].end = big;
    parts[1].begin = big;
    parts[1].end = big + small;
    return parts;
  };
  auto parts = parts_of(900, 100);
  EXPECT_EQ(apply_sampling_temperature(data, parts), "");  // T = 1: as the data is
  EXPECT_FALSE(mixes(parts));
  for (const double t : {2.0, 5.0, 100.0}) {
    data.sampling_temperature = t;
    parts = parts_of(900, 100);
    const std::string log = apply_sampling_temperature(data, parts);
    EXPECT_NE(log.find("pair en-xx: 10.0% of the pairs, sampled"), std::string::npos) << log;
    const double big = std::pow(900.0, 1.0 / t), small = std::pow(100.0, 1.0 / t);
    const auto counts = mix_counts(parts);
    // The epoch keeps its size; the small pair gets its tempered share of it.
    EXPECT_NEAR(double(counts[0] + counts[1]), 1000.0, 1.0);
    EXPECT_NEAR(double(counts[1]), 1000.0 * small / (big + small), 1.0) << "T = " << t;
  }
  EXPECT_NEAR(double(mix_counts(parts)[1]), 500.0, 15.0);  // T = 100: close to uniform
  // The corpus weights come first: a weight of 9 on the small corpus makes the pairs equal.
  data.sampling_temperature = 5.0;
  parts = parts_of(900, 100);
  parts[1].weight = 9.0;
  apply_sampling_temperature(data, parts);
  EXPECT_NEAR(parts[0].weight, 1.0, 1e-12);
  EXPECT_NEAR(parts[1].weight, 9.0, 1e-12);
}

TEST(Mixing, TheTokenizerSampleIsBalancedByTemperatureToo) {
  test::TempDir dir("ml_spm_sample");
  write_three_languages(dir.path() / "data");
  // en-xx gets 40 of its 400 lines (tiny_val), en-de all 400; the bound holds 100 lines.
  Config config = two_pair_config(dir.path() / "data", dir.path() / "run", LangTag::kSource);
  config.data.train[1] = split_into("tiny_val", "xx");
  config.data.spm_sentences = 200;  // joint: 100 lines
  const auto xx_share = [&](double t) {
    config.data.sampling_temperature = t;
    const SpmSample sample = sample_spm_sentences(config.data);
    std::ifstream in(dir.path() / "data" / "tiny_val.xx");
    std::vector<std::string> xx;
    for (std::string line; std::getline(in, line);) xx.push_back(line);
    size_t from_xx = 0;
    for (const auto& line : sample.tgt) from_xx += std::count(xx.begin(), xx.end(), line) > 0;
    return double(from_xx) / double(sample.tgt.size());
  };
  const double proportional = xx_share(1.0), flat = xx_share(100.0);
  EXPECT_NEAR(proportional, 40.0 / 440.0, 0.06);
  EXPECT_GT(flat, 0.3);  // the 40 lines are about half of what a uniform share asks
}

TEST(LanguageTags, SourceTagsLeadTheSourceTargetTagsTheTarget) {
  test::TempDir dir("ml_tags");
  write_three_languages(dir.path() / "data");
  for (const LangTag where : {LangTag::kSource, LangTag::kTarget}) {
    const Config config = two_pair_config(dir.path() / "data", dir.path() / "run", where);
    const fs::path run = dir.path() / (std::string("spm_") + choice_name(where));
    const Tokenizer tokenizer = prepare_tokenizer(config.data, run);
    const LanguageTags tags(config.data, tokenizer);
    for (const std::string lang : {"de", "xx"}) {
      const int64_t id = tokenizer.src_piece_id("<2" + lang + ">");
      ASSERT_GE(id, 4) << "the tag is one piece of the tokenizer";
      const auto tag_text = tokenizer.encode_src("<2" + lang + ">");  // "▁" and the tag
      EXPECT_EQ(tag_text.back(), id);
      const EncodedSplit split = load_corpus(config.data, split_into("tiny_val", lang), tokenizer);
      const auto& text_ids = tokenizer.encode_src(split.src_text[3]);
      const auto& example = split.examples[3];
      if (where == LangTag::kSource) {
        ASSERT_EQ(example.src.size(), text_ids.size() + 1);
        EXPECT_EQ(example.src.front(), id);
        EXPECT_EQ(example.tgt, tokenizer.encode_tgt(split.tgt_text[3]));
      } else {
        EXPECT_EQ(example.src, text_ids);
        EXPECT_EQ(example.tgt.front(), id);
        EXPECT_EQ(tags.target_tag(lang), id);
      }
    }
  }
  // Separate vocabularies: the tags live in the source model only, so target ids that equal a
  // tag's id are ordinary pieces, not a clash.
  {
    Config separate = two_pair_config(dir.path() / "data", dir.path() / "run", LangTag::kSource);
    separate.data.joint_vocab = false;
    separate.data.vocab_size = 120;
    const Tokenizer tokenizer = prepare_tokenizer(separate.data, dir.path() / "separate");
    const EncodedSplit split = load_corpus(separate.data, split_into("tiny_val", "xx"), tokenizer);
    EXPECT_EQ(split.stats.kept, split.stats.read);
    EXPECT_EQ(split.examples[0].src.front(), tokenizer.src_piece_id("<2xx>"));
    EXPECT_EQ(tokenizer.tgt_piece_id("<2xx>"), -1);
  }
  // The tag counts against data.max_len: the longest source of tiny_val is dropped when it
  // would be one piece too long with its tag, kept without tags.
  {
    Config config = two_pair_config(dir.path() / "data", dir.path() / "run", LangTag::kSource);
    const Tokenizer tokenizer = prepare_tokenizer(config.data, dir.path() / "spm_source");
    Config untagged = config;
    untagged.data.lang_tag = LangTag::kNone;
    untagged.data.train.resize(1);
    const EncodedSplit plain = load_corpus(untagged.data, split_into("tiny_val", "de"), tokenizer);
    size_t longest = 0;
    for (const auto& e : plain.examples) longest = std::max(longest, e.src.size());
    config.data.max_len = int64_t(longest);
    untagged.data.max_len = int64_t(longest);
    const size_t at_limit =
        size_t(std::count_if(plain.examples.begin(), plain.examples.end(), [&](const Example& e) {
          return e.src.size() == longest && e.tgt.size() <= longest;
        }));
    ASSERT_GT(at_limit, 0u);
    const auto kept = [&](const Config& c) {
      return load_corpus(c.data, split_into("tiny_val", "de"), tokenizer).stats.kept;
    };
    EXPECT_EQ(kept(config) + at_limit, kept(untagged));
  }
  // A bilingual model has no tags: its pairs are encoded as they always were.
  Config bilingual = test::tiny_config(dir.path() / "bi");
  const Tokenizer plain = prepare_tokenizer(bilingual.data, dir.path() / "bi");
  EXPECT_FALSE(LanguageTags(bilingual.data, plain).active());
  EXPECT_EQ(plain.src_piece_id("<2de>"), -1);
  const EncodedSplit split = load_corpus(bilingual.data, bilingual.data.valid[0], plain);
  EXPECT_EQ(split.examples[0].src, plain.encode_src(split.src_text[0]));
}

TEST(LanguageTags, ATagInTheTextOrMissingFromTheTokenizerIsAnError) {
  test::TempDir dir("ml_clash");
  write_three_languages(dir.path() / "data");
  const Config config = two_pair_config(dir.path() / "data", dir.path() / "run", LangTag::kSource);
  const Tokenizer tokenizer = prepare_tokenizer(config.data, dir.path() / "run");
  {
    std::ofstream en(dir.path() / "data" / "clash.en"), de(dir.path() / "data" / "clash.de");
    en << "a dog .\nsay <2xx> now\n";
    de << "ein hund .\nsag jetzt\n";
  }
  test::expect_error([&] { load_corpus(config.data, split_into("clash", "de"), tokenizer); },
                     "split 'clash' (data.src_lang->de) pair 2 holds the text '<2xx>', which is "
                     "the language tag of 'xx'");
  // A tokenizer without the tags (a reused spm model) cannot serve tags.
  const Config bilingual = test::tiny_config(dir.path() / "bi");
  const Tokenizer plain = prepare_tokenizer(bilingual.data, dir.path() / "bi");
  test::expect_error([&] { LanguageTags(config.data, plain); },
                     "the source tokenizer has no piece '<2de>'");
}

TEST(Multilingual, ValidatesEveryPairAndDecodesTheChosenTarget) {
  test::TempDir dir("ml_train");
  write_three_languages(dir.path() / "data");
  Config config = two_pair_config(dir.path() / "data", dir.path() / "run", LangTag::kTarget);
  config.train.max_epochs = 0;
  config.train.max_steps = 12;
  config.train.validate_every = 12;
  test::train(config);
  const auto mean = test::series(dir.path() / "run", "valid", "loss");
  const auto de = test::series(dir.path() / "run", "valid", "loss_tiny_val.en-de");
  const auto xx = test::series(dir.path() / "run", "valid", "loss_tiny_val.en-xx");
  ASSERT_EQ(mean.size(), 1u);
  ASSERT_EQ(de.size(), 1u);
  ASSERT_EQ(xx.size(), 1u);
  EXPECT_NE(de[0], xx[0]);
  EXPECT_NEAR(mean[0], (de[0] + xx[0]) / 2.0, 1e-9);  // best.pt and early stopping read this

  LoadedModel loaded = load_checkpoint(dir.path() / "run" / "last.pt", at::kCPU);
  const LanguageTags tags(loaded.config.data, loaded.tokenizer);
  // The loss of each pair is what validation logged for it: the tag is in its targets.
  const EncodedSplit split =
      load_corpus(loaded.config.data, split_into("tiny_val", "xx"), loaded.tokenizer);
  const Scores xx_again =
      validate(loaded.model, loaded.tokenizer, split, loaded.config, at::kCPU, "xx");
  EXPECT_NEAR(xx_again.loss(), xx[0], 1e-6);
  DecodeConfig greedy;
  greedy.max_len_offset = 5;
  for (const std::string lang : {"de", "xx"}) {
    Translator translator(loaded.model, loaded.tokenizer, greedy, at::kCPU);
    translator.set_log(nullptr);
    translator.set_language(tags, lang);
    for (const auto& result : translator.translate({"a dog runs .", "two men ."})) {
      ASSERT_TRUE(result.ok());
      // The forced tag is not part of the translation.
      EXPECT_EQ(result.best().find("<2"), std::string::npos) << result.best();
      const auto& tokens = result.nbest.front().tokens;
      EXPECT_TRUE(
          std::none_of(tokens.begin(), tokens.end(), [&](int64_t id) { return tags.is_tag(id); }));
    }
  }
#if NMT_HAVE_HTTP && NMT_HAVE_HTTPLIB
  // Served: each request names its target; none, or one the model lacks, is a 400.
  ServedModel served{loaded.model,
                     loaded.tokenizer,
                     loaded.config,
                     at::kCPU,
                     (dir.path() / "run" / "last.pt").string(),
                     ""};
  ServeOptions options;
  options.port = 0;
  TranslationServer server(std::move(served), options);
  const int port = server.start();
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  for (const std::string lang : {"de", "xx"}) {
    const auto res = client.Post(
        "/translate", json{{"text", {"a dog runs .", "two men ."}}, {"tgt_lang", lang}}.dump(),
        "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const json body = json::parse(res->body);  // named: a range-for over parse(...)[key] dangles
    for (const auto& text : body["translations"]) {
      EXPECT_EQ(text.get<std::string>().find("<2"), std::string::npos) << res->body;
    }
    const auto score = client.Post(
        "/score", json{{"src", "a dog ."}, {"tgt", "ein hund ."}, {"tgt_lang", lang}}.dump(),
        "application/json");
    ASSERT_TRUE(score);
    EXPECT_EQ(score->status, 200) << score->body;
  }
  for (const auto& [body, needle] :
       {std::pair<std::string, std::string>{R"({"text": "a dog ."})", "choose the target"},
        {R"({"text": "a dog .", "tgt_lang": "fr"})", "not trained to translate into 'fr'"}}) {
    const auto res = client.Post("/translate", body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find(needle), std::string::npos) << res->body;
  }
  const json languages = json::parse(client.Get("/info")->body)["languages"];
  EXPECT_EQ(languages["pairs"], json::array({"en-de", "en-xx"}));
  EXPECT_EQ(languages["targets"], json::array({"de", "xx"}));
  // The attention map follows the request's target too; there is no default to fall back on.
  const auto drawn =
      client.Post("/attention", R"({"text": "a dog .", "tgt_lang": "xx"})", "application/json");
  ASSERT_TRUE(drawn);
  EXPECT_EQ(drawn->status, 200) << drawn->body;
  EXPECT_EQ(client.Post("/attention", R"({"text": "a dog ."})", "application/json")->status, 400);
  // The page's Languages menu, in headless Chromium (tests/browser/page_test.py, step 9).
  if (const std::string missing = test::missing_browser(); missing.empty()) {
    EXPECT_EQ(test::run_page_test(port, "serve_page_languages", "--only-languages"), "");
  } else if (std::getenv("CI") != nullptr) {
    ADD_FAILURE() << missing << " is missing (scripts/setup.sh)";
  }
  server.stop();
#endif
}

}  // namespace
}  // namespace nmt
