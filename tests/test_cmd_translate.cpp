// cli/cmd_translate.cpp: nmt translate end to end through the real binary.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cli_test_util.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

TEST(CmdTranslate, StdinKeepsLineOrderAndReportsBadLines) {
  const auto dir = test::temp_dir("translate_cli");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string(),
                           "a dog .\n\nbad \xfe\na man .\n", dir);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find("line 3"), std::string::npos) << run.err;
  Translator translator(model, test::fixture_tokenizer(), test::fixture_config().decode, at::kCPU);
  const auto expected = translator.translate({"a dog .", "", "a man ."});
  EXPECT_EQ(run.out, expected[0].best() + "\n\n\n" + expected[2].best() + "\n");
}

TEST(CmdTranslate, MissingCheckpointIsOneClearLine) {
  const auto dir = test::temp_dir("translate_cli_missing");
  const auto run =
      run_nmt("translate --checkpoint " + (dir / "nope.pt").string() + " hello", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: " + (dir / "nope.pt").string() + ": checkpoint not found\n");
}

TEST(CmdTranslate, BadDeviceIsOneLineNamingIt) {
  const auto dir = test::temp_dir("translate_cli_device");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run =
      run_nmt("translate --device tpu --checkpoint " + (dir / "m.pt").string(), "a dog .\n", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: device 'tpu' is not valid: use auto, cpu, cuda or cuda:N\n");
  EXPECT_EQ(run.out, "");
}

TEST(CmdTranslate, AttentionHeadOutOfRangeIsOneErrorBeforeTranslating) {
  const auto dir = test::temp_dir("translate_cli_head");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto heads = test::fixture_config().model.n_heads;
  const auto run =
      run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string() + " --attention " +
                  (dir / "a.svg").string() + " --head -2 \"a dog .\"",
              "", dir);
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_EQ(run.err, "error: attention head -2 is out of range: the model has " +
                         std::to_string(heads) + " heads (valid: -1.." + std::to_string(heads - 1) +
                         "; -1 = the mean over heads)\n");
  EXPECT_EQ(run.out, "");  // nothing translated
  EXPECT_FALSE(fs::exists(dir / "a.svg"));
}

TEST(CmdTranslate, SamplingNbestDoesNotWidenTheUnusedBeam) {
  // The beam rule (DecodeConfig::widen_beam_to_candidates) is the server's too: sampling keeps
  // the beam, so an n-best list of 1001 samples is not refused for a beam above 1000.
  const auto dir = test::temp_dir("translate_cli_sample_nbest");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string() +
                               " --sample 1001 --nbest 1001 \"a dog .\"",
                           "", dir);
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1001);
}

TEST(CmdTranslate, EarlyStoppingFlagReachesTheSearchAndABadValueNamesIt) {
  const auto dir = test::temp_dir("translate_cli_early_stopping");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const std::string translate =
      "translate --device cpu --beam 4 --length-penalty 2 --checkpoint " + (dir / "m.pt").string();
  auto config = test::fixture_config().decode;
  config.beam = 4;
  config.length_penalty = 2.0;
  for (const char* flag : {" --early-stopping", " --early-stopping=false"}) {
    config.early_stopping = std::string(flag) == " --early-stopping";
    const auto run = run_nmt(translate + flag, "a dog .\na man .\n", dir);
    EXPECT_EQ(run.code, 0) << run.err;
    Translator translator(model, test::fixture_tokenizer(), config, at::kCPU);
    const auto expected = translator.translate({"a dog .", "a man ."});
    EXPECT_EQ(run.out, expected[0].best() + "\n" + expected[1].best() + "\n") << flag;
  }
  const auto bad = run_nmt(translate + " --early-stopping=yes", "a dog .\n", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: --early-stopping = 'yes' is not valid: use --early-stopping (true), "
            "--early-stopping=true or --early-stopping=false\n");
}

void save_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// --prefix, --prefix-column and --constraints reach the search, line by line, and what they
// cannot use is one error naming the option, file and line.
TEST(CmdTranslate, PrefixAndConstraintsShapeEachLine) {
  const auto dir = test::temp_dir("translate_cli_guides");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto checkpoint = " --device cpu --beam 4 --checkpoint " + (dir / "m.pt").string();
  auto config = test::fixture_config().decode;
  config.beam = 4;
  Translator translator(model, test::fixture_tokenizer(), config, at::kCPU);
  translator.set_log(nullptr);
  const auto& tokenizer = test::fixture_tokenizer();
  const auto expected = translator.translate(
      {"a dog .", "a man ."}, 1,
      {encode_guide(tokenizer, "ein", {"hund"}, "line 1"), encode_guide(tokenizer, "", {}, "")});
  save_text(dir / "c.jsonl", "[\"hund\"]\n[]\n");
  const auto run = run_nmt(
      "translate" + checkpoint + " --prefix-column --constraints " + (dir / "c.jsonl").string(),
      "a dog .\tein\na man .\n", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, expected[0].best() + "\n" + expected[1].best() + "\n");
  EXPECT_EQ(expected[0].best().rfind("ein", 0), 0u) << expected[0].best();
  EXPECT_NE(expected[0].best().find("hund"), std::string::npos) << expected[0].best();

  const auto prefix =
      run_nmt("translate" + checkpoint + " --prefix \"ein mann\" \"a dog .\"", "", dir);
  ASSERT_EQ(prefix.code, 0) << prefix.err;
  EXPECT_EQ(prefix.out.rfind("ein mann", 0), 0u) << prefix.out;

  save_text(dir / "bad.jsonl", "[\"hund\"]\n{\"a\": 1}\n");
  const auto bad =
      run_nmt("translate" + checkpoint + " --constraints " + (dir / "bad.jsonl").string(),
              "a dog .\na man .\n", dir);
  // A bad line fails that line only: the first is translated, the second left empty.
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("error: --constraints " + (dir / "bad.jsonl").string() +
                         " line 2: {\"a\":1} is not a list; write a list such as [\"Hund\"]\n"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 2);
  EXPECT_NE(bad.out.find("hund"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.substr(bad.out.size() - 2), "\n\n");  // line 2: empty
  const auto extra = run_nmt(
      "translate" + checkpoint + " --constraints " + (dir / "c.jsonl").string() + " \"a dog .\"",
      "", dir);
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.err.find("line 2: more lines than the input (1)"), std::string::npos)
      << extra.err;
  const auto short_file =
      run_nmt("translate" + checkpoint + " --constraints " + (dir / "c.jsonl").string() + " a b c",
              "", dir);
  EXPECT_EQ(short_file.code, 2);
  EXPECT_NE(short_file.err.find("line 3: missing"), std::string::npos) << short_file.err;
  const auto unknown = run_nmt("translate" + checkpoint + " --prefix 日本 \"a dog .\"", "", dir);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("line 1: the prefix \"日本\" cannot be encoded"), std::string::npos)
      << unknown.err;
}

// --checkpoint A,B decodes with the ensemble; members with different tokenizers are one error
// naming both files.
TEST(CmdTranslate, AnEnsembleOfCheckpointsAndMembersThatCannotJoin) {
  const auto dir = test::temp_dir("translate_cli_ensemble");
  auto a = test::fixture_model(6), b = test::fixture_model(7);
  save_checkpoint(dir / "a.pt", test::fixture_config(), a, test::fixture_tokenizer(), {});
  save_checkpoint(dir / "b.pt", test::fixture_config(), b, test::fixture_tokenizer(), {});
  Translator translator(Ensemble(std::vector<Seq2Seq>{a, b}), test::fixture_tokenizer(),
                        test::fixture_config().decode, at::kCPU);
  translator.set_log(nullptr);
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "a.pt").string() + "," +
                               (dir / "b.pt").string() + " \"a dog .\"",
                           "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, translator.translate({"a dog ."})[0].best() + "\n");

  const fs::path fixtures = NMT_FIXTURES_DIR;
  DataConfig data;
  data.dir = fixtures.string();
  data.train = {CorpusSpec::of_split("tiny")};
  data.vocab_size = 120;  // not the fixture tokenizer's 150
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const auto other_tokenizer = Tokenizer::train(data, text.src, text.tgt, dir / "spm");
  Config config = test::fixture_config();
  config.model.src_vocab_size = config.model.tgt_vocab_size = other_tokenizer.src_vocab_size();
  auto c = test::seeded_model(config.model, 8);
  save_checkpoint(dir / "c.pt", config, c, other_tokenizer, {});
  const auto bad = run_nmt("translate --device cpu --checkpoint " + (dir / "a.pt").string() + "," +
                               (dir / "c.pt").string() + " \"a dog .\"",
                           "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("ensemble members " + (dir / "a.pt").string() + " and " +
                         (dir / "c.pt").string() + " have different tokenizers"),
            std::string::npos)
      << bad.err;
  const auto empty = run_nmt("translate --checkpoint " + (dir / "a.pt").string() + ", x", "", dir);
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("has an empty entry"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace nmt
