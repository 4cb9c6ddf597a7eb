#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_test_util.h"
#include "core/config.h"
#include "core/error.h"
#include "test_util.h"

namespace nmt {
namespace {

// Every field, each changed from its default, survives save and load; and the hand-written list
// covers every key the config has (a field the visitor forgets to read or write, or a new one
// left out of the list, fails here).
TEST(Config, JsonRoundTripKeepsEveryField) {
  const auto changed = test::every_field_changed();
  const auto defaults = config_to_json(Config{});
  ASSERT_EQ(changed.size(), defaults.size());
  size_t keys = 0;
  for (const auto& [section, fields] : defaults.items()) {
    ASSERT_TRUE(changed.contains(section)) << section;
    EXPECT_EQ(changed[section].size(), fields.size()) << section;
    for (const auto& [key, value] : fields.items()) {
      ASSERT_TRUE(changed[section].contains(key)) << section << "." << key;
      EXPECT_NE(changed[section][key], value) << section << "." << key << " is the default";
      ++keys;
    }
  }
  EXPECT_EQ(keys, 95u);
  const Config config = config_from_json(changed, "changed");
  EXPECT_NO_THROW(config.validate());
  EXPECT_EQ(config_to_json(config), changed);
  const auto dir = test::temp_dir("config");
  save_config(config, dir / "c.json");
  EXPECT_EQ(config_to_json(load_config(dir / "c.json")), changed);
  std::ifstream in(dir / "c.json");
  EXPECT_EQ(nlohmann::json::parse(in), changed);  // the file itself, not just the struct
  // A few typed fields, read back as the types the code uses.
  EXPECT_EQ(config.model.d_model, 64);
  EXPECT_TRUE(config.model.share_embeddings);
  EXPECT_DOUBLE_EQ(config.train.lr, 1e-3);
  EXPECT_EQ(config.train.monitor_splits,
            (std::vector<CorpusSpec>{CorpusSpec::of_split("a"), CorpusSpec::of_split("b")}));
  ASSERT_EQ(config.data.train.size(), 2u);
  EXPECT_EQ(config.data.train[0].kind, CorpusKind::kFiles);
  EXPECT_EQ(config.data.train[0].tgt, "a.yy");
  EXPECT_EQ(config.data.train[1].split, "t");
  EXPECT_DOUBLE_EQ(config.data.train[1].weight, 2.5);
  EXPECT_EQ(config.data.valid.at(0).kind, CorpusKind::kTsv);
  EXPECT_EQ(config.data.valid.at(0).src_column, 2);
  EXPECT_EQ(config.train.init_keep, InitKeep::kOptimizer);
  EXPECT_EQ(config.decode.seed, 7);
}

// Equality (which requests the server decodes together) comes from the same visitor: a field
// that differs makes two decode sections unequal, whichever it is.
TEST(Config, DecodeConfigsDifferWhenAnyFieldDiffers) {
  const DecodeConfig defaults;
  EXPECT_EQ(defaults, DecodeConfig{});
  const auto changed_fields = test::every_field_changed();  // alive while its items are iterated
  for (const auto& [key, value] : changed_fields["decode"].items()) {
    const auto changed = config_from_json({{"decode", {{key, value}}}}, "changed").decode;
    EXPECT_NE(changed, defaults) << key;
    EXPECT_EQ(changed, DecodeConfig(changed)) << key;
  }
}

// What the command line and the server complete from the options they were given
// (DecodeConfig::complete): one rule for both.
TEST(Config, CompletingWidensTheBeamAndNamesTheStrategy) {
  DecodeConfig beam;
  beam.nbest = 3;
  beam.complete(/*search_given=*/false, /*beam_given=*/false);
  EXPECT_EQ(beam.beam, 3);
  beam.mbr = 5;
  beam.complete(false, false);
  EXPECT_EQ(beam.beam, 5);
  beam.beam = 8;
  beam.complete(false, false);  // never narrows
  EXPECT_EQ(beam.beam, 8);
  beam.beam = 2;
  beam.complete(false, /*beam_given=*/true);  // a given beam stays (validate refuses it)
  EXPECT_EQ(beam.beam, 2);
  // Draws given without a strategy sample; the samples are the candidates, not the beam.
  DecodeConfig sampling;
  sampling.sample = 8;
  sampling.nbest = 4;
  sampling.mbr = 6;
  sampling.complete(false, false);
  EXPECT_EQ(sampling.search, SearchKind::kSample);
  EXPECT_EQ(sampling.beam, 1);
  EXPECT_NO_THROW(sampling.validate());
  // Given with one, the strategy stays: nucleus keeps its draws.
  DecodeConfig nucleus;
  nucleus.search = SearchKind::kNucleus;
  nucleus.sample = 4;
  nucleus.complete(/*search_given=*/true, false);
  EXPECT_EQ(nucleus.search, SearchKind::kNucleus);
  // Greedy without a beam keeps one hypothesis, whatever the checkpoint's beam was.
  DecodeConfig greedy;
  greedy.beam = 5;
  greedy.search = SearchKind::kGreedy;
  greedy.complete(true, false);
  EXPECT_EQ(greedy.beam, 1);
  EXPECT_NO_THROW(greedy.validate());
}

// A strategy's options are refused with another strategy, naming both keys.
TEST(Config, StrategyOptionsBelongToTheirStrategy) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"decode.sample=8"},
       "decode.sample = 8 draws are for decode.search = sample or nucleus, not beam"},
      {{"decode.search=greedy", "decode.beam=4"}, "decode.search = greedy keeps one hypothesis"},
      {{"decode.search=sample"}, "decode.sample = 0 is out of range: must be in [1, 4096]"},
      {{"decode.search=nucleus", "decode.sample=2", "decode.top_p=0"},
       "decode.top_p = 0 is out of range: must be in [0.01, 1]"},
      {{"decode.search=topk"}, "choose one of beam, greedy, sample, nucleus"}};
  for (const auto& [overrides, message] : refused) {
    Config config;
    test::expect_error([&] { apply_overrides(config, overrides); }, message);
  }
  Config config;
  apply_overrides(config, {"decode.search=nucleus", "decode.sample=16", "decode.top_p=0.95"});
  EXPECT_EQ(config.decode.candidates(), 16);
}

TEST(Config, UnknownKeyIsAnErrorNamingIt) {
  nlohmann::json json = {{"model", {{"d_modle", 128}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); }, "unknown key 'd_modle'");
  json = {{"optimizer", {{"lr", 1}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); }, "unknown section 'optimizer'");
}

TEST(Config, WrongTypeIsAnErrorNamingTheKey) {
  nlohmann::json json = {{"model", {{"d_model", "big"}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); },
                     "model.d_model: expected an integer");
  json = {{"model", {{"d_model", 1.5}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); },
                     "model.d_model: expected an integer");
  json = {{"train", {{"validate_at_start", 1}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); }, "expected true or false");
}

TEST(Config, OutOfRangeValuesNameKeyAndRange) {
  Config config;
  test::expect_error([&] { apply_overrides(config, {"model.dropout=1.5"}); },
                     "model.dropout = 1.5 is out of range: must be in [0, 0.99]");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"train.cpu_workers=5000"}); },
                     "train.cpu_workers = 5000 is out of range: must be in [0, 256]");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"model.n_heads=3"}); }, "not divisible");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"model.activation=tanh"}); },
                     "choose one of relu, gelu");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"data.spm_sentences=0"}); },
                     "data.spm_sentences = 0 is out of range: must be >= 1");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"data.spm_characters=-5"}); },
                     "data.spm_characters = -5 is out of range: must be >= 1");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"data.subword_alpha=1.5"}); },
                     "data.subword_alpha = 1.5 is out of range: must be in [0, 1]");
  config = Config();
  test::expect_error(
      [&] { apply_overrides(config, {"data.subword_nbest=1"}); },
      "data.subword_nbest = 1 is not valid: use -1 (sample from all segmentations) or 2..512");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.beam=4", "decode.mbr=5"});
      },
      "decode.mbr = 5 is not valid: use 0 (off) or a number of candidates from "
      "max(2, decode.nbest = 1) to decode.beam = 4");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.beam=4", "decode.mbr_metric=ter"});
      },
      "decode.mbr_metric = 'ter' is not valid: choose one of bleu, chrf");
  config = Config();
  apply_overrides(config, {"decode.beam=8", "decode.nbest=2", "decode.mbr=8"});
  EXPECT_EQ(config.decode.mbr, 8);
  // Sampling: the draws bound nbest and mbr instead of the beam.
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.search=sample", "decode.sample=-1"});
      },
      "decode.sample = -1 is out of range: must be in [1, 4096]");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.search=sample", "decode.sample=8", "decode.epsilon=0.7"});
      },
      "decode.epsilon = 0.7 is out of range: must be in [0, 0.5]");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.search=sample", "decode.sample=8", "decode.mbr=9"});
      },
      "decode.mbr = 9 is not valid: use 0 (off) or a number of candidates from "
      "max(2, decode.nbest = 1) to decode.sample = 8");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.search=sample", "decode.sample=3", "decode.nbest=4"});
      },
      "decode.nbest = 4 is out of range: must be in [1, 3]");
  config = Config();
  apply_overrides(config, {"decode.search=sample", "decode.beam=1", "decode.sample=32",
                           "decode.nbest=4", "decode.mbr=16"});
  EXPECT_EQ(config.decode.candidates(), 32);
  const auto plain = config.decode.plain_search(5);
  EXPECT_EQ(plain.beam, 5);
  EXPECT_EQ(plain.nbest, 1);
  EXPECT_EQ(plain.mbr, 0);
  EXPECT_EQ(plain.sample, 0);
  EXPECT_NO_THROW(plain.validate());
}

TEST(Config, EarlyStoppingIsOffByDefaultAndABoolean) {
  Config config;
  EXPECT_FALSE(config.decode.early_stopping);  // exact beam search
  apply_overrides(config, {"decode.early_stopping=true"});
  EXPECT_TRUE(config.decode.early_stopping);
  test::expect_error([&] { apply_overrides(config, {"decode.early_stopping=yes"}); },
                     "decode.early_stopping: expected true or false, got string \"yes\"");
}

TEST(Config, OverridesParseValuesAndBareStrings) {
  Config config;
  apply_overrides(config, {"train.lr=3e-4", "train.device=cpu", "data.dir=/tmp/m30k",
                           "model.tie_output=true", "train.name=123"});
  EXPECT_DOUBLE_EQ(config.train.lr, 3e-4);
  EXPECT_EQ(config.train.device, "cpu");
  EXPECT_EQ(config.data.dir, "/tmp/m30k");
  EXPECT_TRUE(config.model.tie_output);
  EXPECT_EQ(config.train.name, "123");
  test::expect_error([&] { apply_overrides(config, {"train.lr"}); }, "expected section.key=value");
  test::expect_error([&] { apply_overrides(config, {"train.lrr=1"}); }, "unknown key 'lrr'");
}

// train.warmup is steps or a share of the budget, in a file and in --set; the name it had before
// (warmup_steps) is still read, and a bad value is one error naming the key and what is valid.
TEST(Config, WarmupIsStepsOrAShareOfTheBudget) {
  Config config;
  apply_overrides(config, {"train.warmup=10%"});
  EXPECT_DOUBLE_EQ(config.train.warmup.percent, 10.0);
  EXPECT_DOUBLE_EQ(config.train.warmup.share(), 0.1);
  EXPECT_EQ(config_to_json(config)["train"]["warmup"], "10%");
  apply_overrides(config, {"train.warmup=800"});  // after a share (a string in the JSON)
  EXPECT_EQ(config.train.warmup, (Warmup{800, 0.0}));
  EXPECT_EQ(config_to_json(config)["train"]["warmup"], 800);
  apply_overrides(config, {"train.warmup=2.5%"});
  EXPECT_EQ(config.train.warmup.text(), "2.5%");
  apply_overrides(config, {"train.warmup_steps=300"});
  EXPECT_EQ(config.train.warmup, (Warmup{300, 0.0}));
  const Config old = config_from_json({{"train", {{"warmup_steps", 50}}}}, "old.json");
  EXPECT_EQ(old.train.warmup, (Warmup{50, 0.0}));
  test::expect_error(
      [] {
        config_from_json({{"train", {{"warmup_steps", 50}, {"warmup", 60}}}}, "both.json");
      },
      "both 'warmup_steps' and its new name 'warmup'");
  for (const std::string bad : {"abc", "-5%", "100%", "0.5", "%", "12x%", "-3"}) {
    SCOPED_TRACE(bad);
    test::expect_error([&] { apply_overrides(config, {"train.warmup=" + bad}); },
                       "train.warmup = ");
    test::expect_error([&] { apply_overrides(config, {"train.warmup=" + bad}); },
                       "a share of the budget such as \"10%\"");
  }
  test::expect_error(
      [] {
        config_from_json({{"train", {{"warmup", true}}}}, "c.json");
      },
      "c.json: train.warmup: expected steps or a share, got boolean");
}

// data.augment is a group of its own: --set data.augment.KEY sets one key and the others keep
// their values, --set data.augment={...} sets the whole group, and its errors name the nested key.
TEST(Config, AugmentIsAGroupSetKeyByKey) {
  Config config;
  EXPECT_FALSE(config.data.augment.any());
  apply_overrides(config, {"data.augment.upper=0.05", "data.augment.typos=0.1"});
  EXPECT_DOUBLE_EQ(config.data.augment.upper, 0.05);
  EXPECT_DOUBLE_EQ(config.data.augment.typos, 0.1);
  EXPECT_DOUBLE_EQ(config.data.augment.title, 0.0);
  EXPECT_TRUE(config.data.augment.any());
  apply_overrides(config, {R"(data.augment={"title": 0.2})"});
  EXPECT_DOUBLE_EQ(config.data.augment.title, 0.2);
  EXPECT_DOUBLE_EQ(config.data.augment.upper, 0.0);  // an object is the whole group
  const nlohmann::json json = {{"data", {{"augment", {{"upper", 0.1}, {"tpyos", 0.1}}}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); },
                     "x.json: data.augment: unknown key 'tpyos' (known: upper, title, "
                     "no_final_punct, typos)");
  test::expect_error([&] { apply_overrides(config, {"data.augment.upper=2"}); },
                     "data.augment.upper = 2 is out of range: must be in [0, 1]");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"data.augment.upper=0.6", "data.augment.title=0.6"});
      },
      "data.augment.upper + data.augment.title = 1.2 is over 1");
  test::expect_error([&] { apply_overrides(config, {"data.dir.x=1"}); },
                     "data.dir is not a group of settings");
  test::expect_error([&] { apply_overrides(config, {"data.augment.upper=high"}); },
                     "data.augment.upper: expected a number");
}

TEST(Config, ListsReadFromArraysOrCommaSeparatedStrings) {
  Config config;
  using Specs = std::vector<CorpusSpec>;
  apply_overrides(config, {"train.monitor_splits=test_2016_flickr,test_2017_flickr"});
  EXPECT_EQ(config.train.monitor_splits, (Specs{CorpusSpec::of_split("test_2016_flickr"),
                                                CorpusSpec::of_split("test_2017_flickr")}));
  apply_overrides(config, {R"(train.monitor_splits=["val"])"});
  EXPECT_EQ(config.train.monitor_splits, Specs{CorpusSpec::of_split("val")});
  EXPECT_EQ(config_from_json(config_to_json(config), "x").train.monitor_splits,
            Specs{CorpusSpec::of_split("val")});
  nlohmann::json json = {{"train", {{"monitor_splits", {1, 2}}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); },
                     "train.monitor_splits[0]: expected a split name or a corpus object, got "
                     "number 1");
  test::expect_error([&] { apply_overrides(config, {"train.monitor_splits=../secret"}); },
                     "is not a split name");
}

TEST(Config, LoadReportsFileAndParseErrors) {
  const auto dir = test::temp_dir("config_bad");
  test::expect_error([&] { load_config(dir / "missing.json"); }, "missing.json: cannot open");
  std::ofstream(dir / "bad.json") << "{\"model\": {";
  test::expect_error([&] { load_config(dir / "bad.json"); }, "bad.json: invalid JSON");
}

// "inherit" builds a config on others (relative paths, in order, recursively), and several
// files lay over each other the same way: later keys win key by key, lists are replaced whole,
// every layer's unknown keys are errors, and a cycle is named instead of recursing forever.
TEST(Config, InheritAndLayeredFilesOverrideKeyByKey) {
  const auto dir = test::temp_dir("config_layers");
  std::filesystem::create_directories(dir / "base");
  std::ofstream(dir / "base" / "recipe.json")
      << R"({"model": {"d_model": 64, "n_heads": 4}, "train": {"lr": 0.002, "max_epochs": 7},
             "data": {"train": ["a", "b"]}})";
  std::ofstream(dir / "base" / "small.json") << R"({"model": {"d_model": 32}})";
  std::ofstream(dir / "mine.json")
      << R"({"inherit": ["base/recipe.json", "base/small.json"], "train": {"lr": 0.001},
             "data": {"train": ["c"]}})";
  const Config mine = load_config(dir / "mine.json");
  EXPECT_EQ(mine.model.d_model, 32);  // small.json over recipe.json
  EXPECT_EQ(mine.model.n_heads, 4);   // from recipe.json
  EXPECT_DOUBLE_EQ(mine.train.lr, 0.001);
  EXPECT_EQ(mine.train.max_epochs, 7);
  ASSERT_EQ(mine.data.train.size(), 1u);  // a list is replaced, not appended to
  EXPECT_EQ(mine.data.train[0].split, "c");

  std::ofstream(dir / "more.json") << R"({"train": {"max_epochs": 3}, "model": {"n_heads": 2}})";
  const Config layered = load_configs({dir / "mine.json", dir / "more.json"});
  EXPECT_EQ(layered.train.max_epochs, 3);
  EXPECT_EQ(layered.model.n_heads, 2);
  EXPECT_DOUBLE_EQ(layered.train.lr, 0.001);

  // A group (data.augment) merges key by key; a corpus object is replaced whole.
  std::ofstream(dir / "noisy.json")
      << R"({"data": {"augment": {"typos": 0.05}, "valid": {"src": "v.en", "tgt": "v.de"}}})";
  std::ofstream(dir / "noisier.json")
      << R"({"inherit": "noisy.json", "data": {"augment": {"upper": 0.1}, "valid": {"split": "x"}}})";
  const Config noisier = load_config(dir / "noisier.json");
  EXPECT_DOUBLE_EQ(noisier.data.augment.typos, 0.05);
  EXPECT_DOUBLE_EQ(noisier.data.augment.upper, 0.1);
  ASSERT_EQ(noisier.data.valid.size(), 1u);
  EXPECT_EQ(noisier.data.valid[0].split, "x");
  EXPECT_TRUE(noisier.data.valid[0].src.empty());

  std::ofstream(dir / "typo.json") << R"({"inherit": "mine.json", "train": {"max_epoch": 3}})";
  test::expect_error([&] { load_config(dir / "typo.json"); }, "unknown key 'max_epoch'");
  std::ofstream(dir / "a.json") << R"({"inherit": "b.json"})";
  std::ofstream(dir / "b.json") << R"({"inherit": "a.json"})";
  test::expect_error([&] { load_config(dir / "a.json"); }, "\"inherit\" makes a cycle");
  std::ofstream(dir / "gone.json") << R"({"inherit": "nowhere.json"})";
  test::expect_error(
      [&] { load_config(dir / "gone.json"); },
      "gone.json: inherit: " + (dir / "nowhere.json").string() + ": cannot open config file");
  std::ofstream(dir / "number.json") << R"({"inherit": 3})";
  test::expect_error([&] { load_config(dir / "number.json"); },
                     "\"inherit\" must be a config file name or a list of them");
}

}  // namespace
}  // namespace nmt
