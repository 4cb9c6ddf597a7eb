// cli/cmd_translate.cpp: nmt translate end to end through the real binary.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cli_test_util.h"
#include "core/config.h"
#include "core/precision.h"
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

// Decoding keeps libgomp's default wait policy and starts once; training re-executes itself once
// with OMP_WAIT_POLICY=PASSIVE (cli/runtime.h). strace shows the process's execve calls.
TEST(CmdTranslate, DecodingStartsOnceWhereTrainingChoosesItsWaitPolicy) {
  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace (scripts/setup.sh) missing";
  const auto dir = test::temp_dir("translate_execs");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  Config config = test::tiny_config(dir / "run");
  config.train.max_steps = 1;
  config.train.precision = Precision::kFp32;
  save_config(config, dir / "config.json");
  const auto execs = [&](const std::string& args) {
    const auto trace = dir / "trace";
    const std::string command =
        "env -u OMP_WAIT_POLICY -u NMT_NO_REEXEC -u NMT_CHOSEN_WAIT_POLICY /usr/bin/strace -f -qq "
        "-e trace=execve -o " +
        trace.string() + " " + NMT_BINARY + " " + args + " > " + (dir / "out").string() +
        " 2>&1 < /dev/null";
    EXPECT_EQ(std::system(command.c_str()), 0) << args << "\n" << read_text(dir / "out");
    const auto lines = read_text(trace);
    int count = 0;
    for (size_t at = lines.find("execve("); at != std::string::npos;
         at = lines.find("execve(", at + 1)) {
      count += lines.compare(lines.find('\n', at) - 4, 4, " = 0") == 0;
    }
    return count;
  };
  EXPECT_EQ(execs("translate --device cpu --checkpoint " + (dir / "m.pt").string() + " 'a dog .'"),
            1);
  EXPECT_EQ(execs("train --config " + (dir / "config.json").string()), 2);
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
  // The beam rule (DecodeConfig::complete) is the server's too: sampling keeps
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

namespace nmt {
namespace {

// A line holding a paragraph: each sentence translated as it would be alone, joined with the
// paragraph's own whitespace; a line too long for the model is translated in parts, not cut.
TEST(CmdTranslate, ParagraphsAreTranslatedSentenceBySentenceAndLongLinesInParts) {
  const auto dir = test::temp_dir("translate_cli_text");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  std::string long_line;
  for (int i = 0; i < 30; ++i) long_line += "a man is walking a dog , ";
  long_line += "the end";
  const auto run = run_nmt("translate --device cpu --checkpoint " + (dir / "m.pt").string(),
                           "A dog runs .  A man is here .\n\n" + long_line + "\n", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  Translator translator(model, test::fixture_tokenizer(), test::fixture_config().decode, at::kCPU);
  const auto alone = translator.translate({"A dog runs .", "A man is here ."});
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = run.out.find('\n', at)) != std::string::npos; at = end + 1) {
    lines.push_back(run.out.substr(at, end - at));
  }
  ASSERT_EQ(lines.size(), 3u) << run.out;
  EXPECT_EQ(lines[0], alone[0].best() + "  " + alone[1].best());
  EXPECT_EQ(lines[1], "");
  EXPECT_NE(run.err.find("line 3: a sentence of"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("translating only the first"), std::string::npos) << run.err;
  // --split none: the paragraph is one segment.
  const auto whole = run_nmt("translate --device cpu --split none --checkpoint " +
                                 (dir / "m.pt").string() + " \"A dog runs .  A man is here .\"",
                             "", dir);
  EXPECT_EQ(whole.out, translator.translate({"A dog runs .  A man is here ."})[0].best() + "\n");
  // What does not combine, and a bad value, is one error naming the valid choices.
  const auto bad =
      run_nmt("translate --split words --checkpoint " + (dir / "m.pt").string(), "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: --split 'words' is not valid: choose one of sentences, none\n");
  const auto html_nbest = run_nmt(
      "translate --format html --nbest 2 --checkpoint " + (dir / "m.pt").string() + " x", "", dir);
  EXPECT_EQ(html_nbest.err,
            "error: --format html translates documents; --nbest 2 works on plain lines "
            "(--format text)\n");
}

// --format html: a document in, the same document out, translated: every tag kept and closed,
// script and attributes untouched.
TEST(CmdTranslate, AnHtmlDocumentComesBackWithItsMarkup) {
  const auto dir = test::temp_dir("translate_cli_html");
  auto model = test::fixture_model(6);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  save_text(dir / "page.html",
            "<!DOCTYPE html>\n<html><head><title>a dog</title>"
            "<script>if (a < b) run();</script></head>\n<body><p class=\"c\">a <b>man</b> is "
            "<i>walking</i> a dog .</p>\n<p>a cat<br>sleeps .</p></body></html>\n");
  const auto run = run_nmt(
      "translate --device cpu --format html --checkpoint " + (dir / "m.pt").string() + " --input " +
          (dir / "page.html").string() + " --output " + (dir / "out.html").string(),
      "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto out = test::read_text(dir / "out.html");
  for (const char* kept :
       {"<!DOCTYPE html>\n<html><head><title>", "<script>if (a < b) run();</script>",
        "<p class=\"c\">", "<b>", "</b>", "<i>", "</i>", "<br>", "</p></body></html>\n"}) {
    EXPECT_NE(out.find(kept), std::string::npos) << kept << " in " << out;
  }
  Translator translator(model, test::fixture_tokenizer(), test::fixture_config().decode, at::kCPU);
  EXPECT_NE(out.find("<title>" + translator.translate({"a dog"})[0].best() + "</title>"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace nmt
