// Corpora in any form (issue 45): data.train / data.valid / monitor specs in config JSON and
// --set, language codes, reading files / tsv / gzip with their errors, and weighted mixing.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "corpus_test_util.h"
#include "data/corpus.h"
#include "data/dataset.h"
#include "data/mixing.h"
#include "decode_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The default config with `assignments` applied (and validated).
Config apply_overrides_to(const std::vector<std::string>& assignments) {
  Config config;
  apply_overrides(config, assignments);
  return config;
}

TEST(CorpusSpec, ReadsEveryFormAndWritesOnlyTheNewKeys) {
  const json config = {{"data",
                        {{"train",
                          {"train",
                           {{"src", "corpus.ja"}, {"tgt", "corpus.en"}, {"weight", 3}},
                           {{"tsv", "x.tsv.gz"}, {"src_column", 2}, {"tgt_column", 0}}}},
                         {"valid", {{"tsv", "v.tsv"}}}}}};
  const Config c = config_from_json(config, "c.json");
  ASSERT_EQ(c.data.train.size(), 3u);
  EXPECT_EQ(c.data.train[0], CorpusSpec::of_split("train"));
  EXPECT_EQ(c.data.train[1].kind, CorpusKind::kFiles);
  EXPECT_EQ(c.data.train[1].name(), "corpus");
  EXPECT_DOUBLE_EQ(c.data.train[1].weight, 3.0);
  EXPECT_EQ(c.data.train[2].name(), "x");
  EXPECT_EQ(c.data.train[2].src_column, 2);
  EXPECT_EQ(c.data.valid.at(0).tgt_column, 1);
  const json written = config_to_json(c);
  EXPECT_EQ(written["data"]["train"], config["data"]["train"]);
  EXPECT_EQ(written["data"]["valid"],
            json::array({{{"tsv", "v.tsv"}, {"src_column", 0}, {"tgt_column", 1}}}));
  EXPECT_FALSE(written["data"].contains("train_split"));
}

// Every config and checkpoint written before issue 45 says train_split / valid_split.
TEST(CorpusSpec, OldKeyNamesStillLoad) {
  const Config c =
      config_from_json({{"data", {{"train_split", "t"}, {"valid_split", "v"}}}}, "old");
  EXPECT_EQ(c.data.train, std::vector<CorpusSpec>{CorpusSpec::of_split("t")});
  EXPECT_EQ(c.data.valid.at(0), CorpusSpec::of_split("v"));
  test::expect_error(
      [] {
        config_from_json({{"data", {{"train_split", "t"}, {"train", "u"}}}}, "both");
      },
      "both 'train_split' and its new name 'train'");
  Config set;
  apply_overrides(set, {"data.train_split=tiny", "data.valid=tiny_val"});
  EXPECT_EQ(set.data.train, std::vector<CorpusSpec>{CorpusSpec::of_split("tiny")});
  EXPECT_EQ(set.data.valid.at(0), CorpusSpec::of_split("tiny_val"));
}

TEST(CorpusSpec, SetTakesSplitNamesListsAndJson) {
  Config c;
  apply_overrides(c, {"data.train=a,b"});
  EXPECT_EQ(c.data.train,
            (std::vector<CorpusSpec>{CorpusSpec::of_split("a"), CorpusSpec::of_split("b")}));
  apply_overrides(
      c, {R"(data.train=[{"src": "a b.xx", "tgt": "c.yy"}, {"split": "s", "weight": 0.5}])"});
  ASSERT_EQ(c.data.train.size(), 2u);
  EXPECT_EQ(c.data.train[0].src, "a b.xx");
  EXPECT_DOUBLE_EQ(c.data.train[1].weight, 0.5);
  apply_overrides(c, {R"(data.valid={"tsv": "v.tsv", "src_column": 1, "tgt_column": 0})"});
  EXPECT_EQ(c.data.valid.at(0).kind, CorpusKind::kTsv);
  test::expect_error([&] { apply_overrides(c, {R"(data.valid={"src": "a"})"}); },
                     "is not a corpus");
  test::expect_error([&] { apply_overrides(c, {R"(data.valid={"split": "v", "weight": 2})"}); },
                     "data.valid: a weight applies to data.train corpora only");
  test::expect_error([&] { apply_overrides(c, {R"(data.train={"split": "t", "weight": 0})"}); },
                     "weight = 0 is out of range");
  test::expect_error([&] { apply_overrides(c, {R"(data.train={"tsv": "t", "tgt_column": 0})"}); },
                     "are not valid: two different 0-based columns");
  test::expect_error([&] { apply_overrides(c, {"data.train=[]"}); }, "data.train is empty");
}

TEST(CorpusSpec, LanguageCodesOnlyNeedToBeFileNameSafe) {
  Config c;
  for (const std::string& code :
       std::vector<std::string>{"pt-BR", "ja", "xx", "zh_Hant", std::string(32, 'a')}) {
    EXPECT_NO_THROW(apply_overrides(c, {"data.src_lang=" + code})) << code;
  }
  for (const std::string& code : std::vector<std::string>{"e n", "a/b", "", std::string(33, 'a')}) {
    test::expect_error([&] { apply_overrides(c, {"data.tgt_lang=" + code}); },
                       "is not a valid language code: use 1-32 characters from [A-Za-z0-9_-]");
  }
  test::expect_error(
      [&] {
        apply_overrides(c, {"data.src_lang=xx", "data.tgt_lang=xx"});
      },
      "data.src_lang and data.tgt_lang are both 'xx'");
}

TEST(CorpusSpec, SpmModelKeysMustAgreeWithJointVocab) {
  Config c;
  EXPECT_NO_THROW(apply_overrides(c, {"data.spm_model=m.model"}));
  EXPECT_NO_THROW(apply_overrides(c, {"data.joint_vocab=false", "data.spm_model_tgt=t.model"}));
  test::expect_error(
      [] {
        (void)apply_overrides_to({"data.spm_model=m.model", "data.spm_model_tgt=t.model"});
      },
      "set data.joint_vocab = false too");
  test::expect_error(
      [] {
        (void)apply_overrides_to({"data.spm_model=m.model", "data.joint_vocab=false"});
      },
      "give the target side's model as data.spm_model_tgt");
  test::expect_error([] { (void)apply_overrides_to({"data.spm_model_tgt=t.model"}); },
                     "needs data.spm_model");
}

TEST(CorpusRead, FilesWithAnyNamesTsvColumnsCrlfAndByteOrderMark) {
  const test::TempDir dir("corpus_forms");
  test::write_lines_to(dir / "train corpus (v2).xx.txt", {"\xEF\xBB\xBFkalo miru", "tesa"}, "\r\n");
  const std::string gz = test::gzip("olak\r\nimi\r\n");
  std::ofstream(dir / "ziel.yy", std::ios::binary) << gz;  // gzip found by content, not name
  DataConfig data;
  CorpusSpec files;
  files.kind = CorpusKind::kFiles;
  files.src = (dir / "train corpus (v2).xx.txt").string();
  files.tgt = (dir / "ziel.yy").string();
  const ParallelText text = read_corpus(data, files);
  EXPECT_EQ(text.src, (std::vector<std::string>{"kalo miru", "tesa"}));
  EXPECT_EQ(text.tgt, (std::vector<std::string>{"olak", "imi"}));
  test::write_lines_to(dir / "all.tsv", {"\xEF\xBB\xBFid1\tolak\tkalo", "id2\timi\ttesa\textra"},
                       "\r\n");
  CorpusSpec tsv;
  tsv.kind = CorpusKind::kTsv;
  tsv.tsv = (dir / "all.tsv").string();
  tsv.src_column = 2;
  tsv.tgt_column = 1;
  const ParallelText columns = read_corpus(data, tsv);
  EXPECT_EQ(columns.src, (std::vector<std::string>{"kalo", "tesa"}));
  EXPECT_EQ(columns.tgt, (std::vector<std::string>{"olak", "imi"}));
}

TEST(CorpusRead, BadDataIsOneErrorNamingFileAndLine) {
  const test::TempDir dir("corpus_bad");
  test::write_lines_to(dir / "a.tsv", {"x\ty", "x\ty", "only one"});
  test::expect_error([&] { read_tsv(dir / "a.tsv", 0, 1); },
                     "a.tsv' line 3: 1 tab-separated field(s), but columns 0 (source) and 1 "
                     "(target) need at least 2");
  test::write_lines_to(dir / "s.xx", {"a", "b", "c"});
  test::write_lines_to(dir / "t.yy", {"a", "b"});
  test::expect_error([&] { read_parallel(dir / "s.xx", dir / "t.yy"); },
                     "s.xx' has 3 lines but '" + (dir / "t.yy").string() + "' has 2");
  const std::string whole = test::gzip(std::string(20000, 'a') + "\n");
  std::ofstream(dir / "cut.gz", std::ios::binary) << whole.substr(0, whole.size() - 12);
  test::expect_error([&] { read_lines(dir / "cut.gz"); },
                     "cut.gz' is a truncated or corrupt gzip file");
  std::ofstream(dir / "whole.gz", std::ios::binary) << whole;
  EXPECT_EQ(read_lines(dir / "whole.gz").size(), 1u);
  std::ofstream(dir / "u.xx", std::ios::binary) << "ok\n\xC3\x28\n";
  test::expect_error([&] { read_lines(dir / "u.xx"); }, "u.xx' line 2: invalid UTF-8");
}

TEST(CorpusRead, EmptyCorpusAfterFilteringIsAnErrorNamingIt) {
  const test::TempDir dir("corpus_empty");
  test::write_lines_to(dir / "e.xx", {"", "  "});
  test::write_lines_to(dir / "e.yy", {"a", "b"});
  DataConfig data;
  data.src_lang = "xx";
  data.tgt_lang = "yy";
  data.dir = dir.string();
  test::expect_error([&] { load_split(data, "e", test::fixture_tokenizer()); },
                     "empty corpus: split 'e' has no usable sentence pair (2 read, 2 with an "
                     "empty side, 0 longer than data.max_len pieces)");
}

std::vector<CorpusPart> parts_of(std::vector<std::pair<size_t, double>> sizes_and_weights) {
  std::vector<CorpusPart> parts;
  size_t begin = 0;
  for (const auto& [size, weight] : sizes_and_weights) {
    parts.push_back({"p" + std::to_string(parts.size()), begin, begin + size, weight, {}});
    begin += size;
  }
  return parts;
}

TEST(CorpusMix, EachCorpusGivesRoundWeightTimesItsPairs) {
  const auto parts = parts_of({{10, 1.0}, {8, 2.5}, {7, 0.3}});
  ASSERT_TRUE(mixes(parts));
  EXPECT_FALSE(mixes(parts_of({{10, 1.0}, {3, 1.0}})));
  EXPECT_EQ(mix_counts(parts), (std::vector<size_t>{10, 20, 2}));
  const auto mix = epoch_mix(parts, 1, 0);
  ASSERT_EQ(mix.size(), 32u);
  std::vector<int> seen(25, 0);
  for (const size_t i : mix) ++seen[i];
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(seen[i], 1) << i;  // weight 1: each pair once
  int extra = 0;
  for (size_t i = 10; i < 18; ++i) {  // weight 2.5: each twice, 4 of 8 a third time
    EXPECT_TRUE(seen[i] == 2 || seen[i] == 3) << i;
    extra += seen[i] - 2;
  }
  EXPECT_EQ(extra, 4);
  int drawn = 0;
  for (size_t i = 18; i < 25; ++i) {  // weight 0.3: 2 of 7, no pair twice
    EXPECT_LE(seen[i], 1);
    drawn += seen[i];
  }
  EXPECT_EQ(drawn, 2);
  EXPECT_EQ(epoch_mix(parts, 1, 0), mix);  // deterministic in (seed, epoch): exact resume
  EXPECT_NE(epoch_mix(parts, 1, 1), mix);
  EXPECT_NE(epoch_mix(parts, 2, 0), mix);
}

}  // namespace
}  // namespace nmt
