#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/error.h"
#include "test_util.h"

namespace nmt {
namespace {

TEST(Config, JsonRoundTripKeepsEveryField) {
  Config config;
  config.model.d_model = 128;
  config.model.positions = Positions::kSinusoidal;
  config.model.share_embeddings = true;
  config.data.src_lang = "de";
  config.data.tgt_lang = "en";
  config.train.lr = 3e-4;
  config.decode.beam = 5;
  const auto dir = test::temp_dir("config");
  save_config(config, dir / "c.json");
  const Config loaded = load_config(dir / "c.json");
  EXPECT_EQ(config_to_json(loaded), config_to_json(config));
  EXPECT_EQ(loaded.model.d_model, 128);
  EXPECT_EQ(loaded.model.positions, Positions::kSinusoidal);
  EXPECT_TRUE(loaded.model.share_embeddings);
  EXPECT_DOUBLE_EQ(loaded.train.lr, 3e-4);
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
  test::expect_error([&] { apply_overrides(config, {"decode.sample=-1"}); },
                     "decode.sample = -1 is out of range: must be in [0, 4096]");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"decode.sample=8", "decode.epsilon=0.7"}); },
                     "decode.epsilon = 0.7 is out of range: must be in [0, 0.5]");
  config = Config();
  test::expect_error(
      [&] {
        apply_overrides(config, {"decode.sample=8", "decode.mbr=9"});
      },
      "decode.mbr = 9 is not valid: use 0 (off) or a number of candidates from "
      "max(2, decode.nbest = 1) to decode.sample = 8");
  config = Config();
  test::expect_error([&] { apply_overrides(config, {"decode.sample=3", "decode.nbest=4"}); },
                     "decode.nbest = 4 is out of range: must be in [1, 3]");
  config = Config();
  apply_overrides(config, {"decode.beam=1", "decode.sample=32", "decode.nbest=4",
                           "decode.mbr=16"});
  EXPECT_EQ(config.decode.candidates(), 32);
  const auto plain = config.decode.plain_search(5);
  EXPECT_EQ(plain.beam, 5);
  EXPECT_EQ(plain.nbest, 1);
  EXPECT_EQ(plain.mbr, 0);
  EXPECT_EQ(plain.sample, 0);
  EXPECT_NO_THROW(plain.validate());
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

TEST(Config, ListsReadFromArraysOrCommaSeparatedStrings) {
  Config config;
  apply_overrides(config, {"train.monitor_splits=test_2016_flickr,test_2017_flickr"});
  EXPECT_EQ(config.train.monitor_splits,
            (std::vector<std::string>{"test_2016_flickr", "test_2017_flickr"}));
  apply_overrides(config, {R"(train.monitor_splits=["val"])"});
  EXPECT_EQ(config.train.monitor_splits, std::vector<std::string>{"val"});
  EXPECT_EQ(config_from_json(config_to_json(config), "x").train.monitor_splits,
            std::vector<std::string>{"val"});
  nlohmann::json json = {{"train", {{"monitor_splits", {1, 2}}}}};
  test::expect_error([&] { config_from_json(json, "x.json"); },
                     "train.monitor_splits: expected a list of strings, got element 1");
  test::expect_error([&] { apply_overrides(config, {"train.monitor_splits=../secret"}); },
                     "is not a split name");
}

TEST(Config, LoadReportsFileAndParseErrors) {
  const auto dir = test::temp_dir("config_bad");
  test::expect_error([&] { load_config(dir / "missing.json"); }, "missing.json: cannot open");
  std::ofstream(dir / "bad.json") << "{\"model\": {";
  test::expect_error([&] { load_config(dir / "bad.json"); }, "bad.json: invalid JSON");
}

}  // namespace
}  // namespace nmt
