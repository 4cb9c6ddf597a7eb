// Training on your own data (issue 45) through the real binary: a made-up xx->yy pair given as
// two files with unusual names (one gzipped) and as a TSV file, weighted; nmt prepare, train,
// evaluate and translate all run on it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "corpus_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Writes the xx->yy corpora into `dir` and a config training on them into dir/c.json.
void write_own_data(const fs::path& dir) {
  const auto files = test::made_up_corpus(60);
  test::write_lines_to(dir / "data/my corpus.xx-part", files.src, "\r\n");
  std::ofstream(dir / "data/ziel-text.yy", std::ios::binary) << test::gzip([&] {
    std::string text;
    for (const auto& line : files.tgt) text += line + "\n";
    return text;
  }());
  const auto tsv = test::made_up_corpus(40, 5);
  std::vector<std::string> rows;
  for (size_t i = 0; i < tsv.src.size(); ++i) {
    rows.push_back("id" + std::to_string(i) + "\t" + tsv.tgt[i] + "\t" + tsv.src[i]);
  }
  test::write_lines_to(dir / "data/pairs.tsv", rows);
  const json config = {
      {"model",
       {{"d_model", 32},
        {"n_heads", 2},
        {"encoder_layers", 1},
        {"decoder_layers", 1},
        {"d_ff", 64},
        {"max_len", 64}}},
      {"data",
       {{"src_lang", "xx"},
        {"tgt_lang", "yy"},
        {"train",
         {{{"src", (dir / "data/my corpus.xx-part").string()},
           {"tgt", (dir / "data/ziel-text.yy").string()}},
          {{"tsv", (dir / "data/pairs.tsv").string()},
           {"src_column", 2},
           {"tgt_column", 1},
           {"weight", 2}}}},
        {"valid",
         {{"tsv", (dir / "data/pairs.tsv").string()}, {"src_column", 2}, {"tgt_column", 1}}},
        {"vocab_size", 60},
        {"max_len", 63},
        {"batch_tokens", 300}}},
      {"train",
       {{"run_dir", (dir / "run").string()},
        {"device", "cpu"},
        {"threads", 1},
        {"max_epochs", 0},
        {"max_steps", 4},
        {"log_every", 1},
        {"valid_bleu", false},
        {"metric", "loss"},
        {"warmup", 2}}}};
  std::ofstream(dir / "c.json") << config.dump(2);
}

TEST(OwnData, MadeUpPairFromFilesAndTsvTrainsEvaluatesAndTranslates) {
  const test::TempDir dir("own_data");
  write_own_data(dir);
  const auto prepare =
      test::run_nmt("prepare --config '" + (dir / "c.json").string() + "'", "", dir);
  ASSERT_EQ(prepare.code, 0) << prepare.err;
  EXPECT_NE(prepare.out.find("my corpus (weight 1): 60 pairs read, 60 kept"), std::string::npos)
      << prepare.out;
  EXPECT_NE(prepare.out.find("pairs (weight 2): 40 pairs read, 40 kept"), std::string::npos);
  EXPECT_NE(prepare.out.find("epoch 1 mix (corpus weights): 140 pairs"), std::string::npos);

  // 100 pairs are refused with the numbers, unless the user insists.
  const auto refused = test::run_nmt("train --config '" + (dir / "c.json").string() + "'", "", dir);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("the training data has 100 sentence pairs (of 100 read), fewer than "
                             "500: too little to train a useful model"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--set train.allow_small_data=true"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "run/last.pt"));
  const auto train = test::run_nmt(
      "train --config '" + (dir / "c.json").string() + "' --set train.allow_small_data=true", "",
      dir);
  ASSERT_EQ(train.code, 0) << train.out << train.err;
  const std::string log = test::read_text(dir / "run/train.log");
  EXPECT_NE(log.find("corpus mix per epoch: my corpus 60 of 60 (weight 1.00), pairs 80 of 40 "
                     "(weight 2.00); 140 pairs in all"),
            std::string::npos)
      << log;
  EXPECT_TRUE(fs::exists(dir / "run/spm.model"));
  const json saved = json::parse(test::read_text(dir / "run/config.json"));
  EXPECT_EQ(saved["data"]["train"][1]["weight"], 2.0);
  EXPECT_EQ(saved["data"]["src_lang"], "xx");

  const std::string tsv = (dir / "data/pairs.tsv").string();
  const auto evaluate = test::run_nmt(
      "evaluate --checkpoint '" + (dir / "run").string() + "' --corpus '{\"tsv\": \"" + tsv +
          "\", \"src_column\": 2, \"tgt_column\": 1}' --hyp-dir '" + (dir / "hyp").string() + "'",
      "", dir);
  ASSERT_EQ(evaluate.code, 0) << evaluate.err;
  EXPECT_NE(evaluate.out.find("pairs: 40 sentences, xx -> yy"), std::string::npos) << evaluate.out;
  EXPECT_NE(evaluate.out.find("BLEU"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "hyp/hyp.pairs.yy"));

  const auto translate = test::run_nmt("translate --checkpoint '" + (dir / "run").string() + "'",
                                       "kalo miru .\n", dir);
  ASSERT_EQ(translate.code, 0) << translate.err;
  EXPECT_FALSE(translate.out.empty());
}

// cxxopts would cut a --set value at its commas: JSON values and lists arrive whole.
TEST(OwnData, SetTakesJsonAndCommaListsOnTheCommandLine) {
  const test::TempDir dir("own_data_set");
  const auto run = test::run_nmt(
      "train --set train.monitor_splits=a,b --set data.src_lang=pt-BR --set data.tgt_lang=xx "
      "--set 'data.train=[{\"src\": \"x y.pt\", \"tgt\": \"b.xx\", \"weight\": 2}, \"s\"]' "
      "--print-config",
      "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const json config = json::parse(run.out);
  EXPECT_EQ(config["train"]["monitor_splits"], json({"a", "b"}));
  EXPECT_EQ(config["data"]["train"],
            json::parse(R"([{"src": "x y.pt", "tgt": "b.xx", "weight": 2.0}, "s"])"));
  EXPECT_EQ(config["data"]["src_lang"], "pt-BR");
}

}  // namespace
}  // namespace nmt
