// cli/cmd_evaluate.cpp: nmt evaluate end to end through the real binary.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "data/corpus.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "test_util.h"
#include "text/document.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
}

/// A checkpoint m.pt in `dir` whose data.dir (dir/data) holds two splits, "val" (the fixture's
/// validation sources) and "part" (the first 40 training sources), each with references that
/// are the model's own beam-2 translations on even lines and the corpus' references on odd ones:
/// the model's outputs are non-empty and vary, and BLEU and chrF land strictly between 0 and
/// 100, so a score computed from other hypotheses or references cannot match. Returns the
/// expected hypotheses (beam 2) per split.
std::map<std::string, std::vector<std::string>> evaluation_fixture(const fs::path& dir) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  fs::create_directories(dir / "data");
  Config config = fixture_config();
  config.data.dir = (dir / "data").string();
  auto model = fixture_model(7);
  save_checkpoint(dir / "m.pt", config, model, fixture_tokenizer(), {});
  DecodeConfig beam2 = config.decode;
  beam2.beam = 2;
  Translator translator(model, fixture_tokenizer(), beam2, at::kCPU);
  std::map<std::string, std::vector<std::string>> expected;
  for (const auto& [split, file] :
       {std::pair<std::string, std::string>{"val", "tiny_val"}, {"part", "tiny"}}) {
    auto src = read_lines(fixtures / (file + ".en"));
    auto refs = read_lines(fixtures / (file + ".de"));
    src.resize(40), refs.resize(40);
    const auto hyps = translator.translate_texts(src);
    for (size_t i = 0; i < refs.size(); i += 2) refs[i] = hyps[i];
    write_lines(dir / "data" / (split + ".en"), src);
    write_lines(dir / "data" / (split + ".de"), refs);
    expected[split] = hyps;
  }
  return expected;
}

/// Expects the --json entry of `split` to hold the scores of `hyps` (as written by evaluate)
/// against the split's references, strictly between 0 and 100.
void expect_scores_of(const nlohmann::json& entry, const fs::path& data_dir,
                      const std::string& split, const std::vector<std::string>& hyps) {
  EXPECT_EQ(entry["test_set"], split);
  EXPECT_EQ(entry["beam"], 2);
  EXPECT_EQ(entry["early_stopping"], false);
  EXPECT_EQ(entry["sentences"], hyps.size());
  const auto refs = read_lines(data_dir / (split + ".de"));
  const double bleu = corpus_bleu(hyps, refs).score, chrf = corpus_chrf(hyps, refs).score;
  EXPECT_GT(bleu, 1.0) << split;
  EXPECT_LT(bleu, 99.0) << split;
  EXPECT_GT(chrf, 1.0) << split;
  EXPECT_LT(chrf, 99.0) << split;
  EXPECT_DOUBLE_EQ(entry["bleu"].get<double>(), bleu) << split;
  EXPECT_DOUBLE_EQ(entry["bleu_lowercase"].get<double>(), corpus_bleu(hyps, refs, true).score);
  EXPECT_DOUBLE_EQ(entry["chrf"].get<double>(), chrf) << split;
}

TEST(CmdEvaluate, SeveralSplitsInOneRunWithJsonScores) {
  const auto dir = test::temp_dir("evaluate_cli");
  const auto expected = evaluation_fixture(dir);
  const auto run =
      run_nmt("evaluate --device cpu --checkpoint " + (dir / "m.pt").string() +
                  " --split val,part --beam 2 --json " + (dir / "scores.json").string(),
              "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  std::ifstream in(dir / "scores.json");
  const auto scores = nlohmann::json::parse(in);
  ASSERT_EQ(scores.size(), 2u);
  for (const auto& [index, split] : {std::pair{0, "val"}, {1, "part"}}) {
    // The hypotheses written next to the checkpoint are the model's beam-2 translations...
    const auto hyps = read_lines(dir / ("hyp." + std::string(split) + ".de"));
    EXPECT_EQ(hyps, expected.at(split)) << split;
    // ...and the scores are theirs.
    expect_scores_of(scores[index], dir / "data", split, hyps);
  }
  const auto both = run_nmt(
      "evaluate --checkpoint " + (dir / "m.pt").string() + " --split val,part --output x.de", "",
      dir);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--output names one hypotheses file"), std::string::npos) << both.err;
}

TEST(CmdEvaluate, HypDirKeepsHypothesesApartFromTheCheckpoint) {
  const auto dir = test::temp_dir("evaluate_cli_hyp_dir");
  const auto expected = evaluation_fixture(dir);
  const std::string evaluate = "evaluate --device cpu --checkpoint " + (dir / "m.pt").string() +
                               " --split val,part --beam 2 --json " +
                               (dir / "scores.json").string();
  const auto run = run_nmt(evaluate + " --hyp-dir " + (dir / "avg10").string(), "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  std::ifstream in(dir / "scores.json");
  const auto scores = nlohmann::json::parse(in);
  ASSERT_EQ(scores.size(), 2u);
  for (const auto& [index, split] : {std::pair{0, "val"}, {1, "part"}}) {
    const std::string name = "hyp." + std::string(split) + ".de";
    EXPECT_FALSE(fs::exists(dir / name));
    const auto hyps = read_lines(dir / "avg10" / name);
    EXPECT_EQ(hyps, expected.at(split)) << split;
    expect_scores_of(scores[index], dir / "data", split, hyps);
  }
  const auto both = run_nmt(evaluate + " --hyp-dir x --output x.de", "", dir);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--hyp-dir"), std::string::npos) << both.err;
  // The conflict is reported before the checkpoint is read: a missing one does not mask it.
  const auto early = run_nmt("evaluate --checkpoint " + (dir / "missing.pt").string() +
                                 " --split val --hyp-dir x --output x.de",
                             "", dir);
  EXPECT_EQ(early.code, 2);
  EXPECT_NE(early.err.find("--hyp-dir"), std::string::npos) << early.err;
}

TEST(CmdEvaluate, MissingSplitIsOneLineNamingTheFile) {
  const auto dir = test::temp_dir("evaluate_cli_missing");
  evaluation_fixture(dir);
  const auto run = run_nmt(
      "evaluate --device cpu --checkpoint " + (dir / "m.pt").string() + " --split nope", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find((dir / "data" / "nope.en").string()), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST(CmdEvaluate, ALineLongerThanTheModelReadsIsSplitNotCut) {
  // A model that reads 11 source pieces, trained on 8 at most, and a test line of more than 11:
  // evaluate scores the translation of all of it, in parts of at most 8 pieces, as `nmt
  // translate` gives it; a line that fits is translated as Translator::translate does.
  const auto dir = test::temp_dir("evaluate_cli_long");
  fs::create_directories(dir / "data");
  Config config = fixture_config(12);
  config.data.max_len = 8;
  config.data.dir = (dir / "data").string();
  auto model = fixture_model(7, 0.0, 12);
  save_checkpoint(dir / "m.pt", config, model, fixture_tokenizer(), {});
  std::string long_line;
  for (int i = 0; i < 8; ++i) long_line += "a dog in a green jacket , ";
  long_line += "a dog .";
  ASSERT_GT(fixture_tokenizer().encode_src(long_line).size(), 11u);
  const std::vector<std::string> src{long_line, "a dog ."};
  write_lines(dir / "data" / "long.en", src);
  write_lines(dir / "data" / "long.de", {"ein hund in einer grünen jacke .", "ein hund ."});
  const auto run = run_nmt(
      "evaluate --device cpu --checkpoint " + (dir / "m.pt").string() + " --split long --beam 2",
      "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto hyps = read_lines(dir / "hyp.long.de");
  DecodeConfig beam2 = config.decode;
  beam2.beam = 2;
  Translator translator(model, fixture_tokenizer(), beam2, at::kCPU);
  TextOptions whole_lines;
  whole_lines.split = SplitMode::kNone;
  whole_lines.casing = CasingMode::kNone;
  whole_lines.max_pieces = 8;  // data.max_len
  std::vector<std::string> expected;
  for (const auto& result : translate_text(translator, src, whole_lines)) {
    expected.push_back(result.best());
  }
  EXPECT_EQ(hyps, expected);
  EXPECT_NE(hyps[0], translator.translate({long_line})[0].best());  // not the first 11 pieces'
  EXPECT_EQ(hyps[1], translator.translate({"a dog ."})[0].best());
}

}  // namespace
}  // namespace nmt
