#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/corpus.h"
#include "decode/mbr.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

DecodeConfig short_outputs(int64_t beam = 1, int64_t nbest = 1) {
  DecodeConfig config;
  config.beam = beam;
  config.nbest = nbest;
  config.max_len_offset = 3;
  return config;
}

/// A translator over a random model; warnings and errors go to `log`.
Translator make_translator(std::ostringstream& log, const DecodeConfig& config = short_outputs(),
                           double eos_bias = 0.0, int64_t max_len = 64) {
  Translator translator(test::fixture_model(3, eos_bias, max_len), test::fixture_tokenizer(),
                        config, at::kCPU);
  translator.set_log(&log);
  return translator;
}

TEST(Translator, EmptyLinesGiveEmptyOutputWithoutAModelCall) {
  std::ostringstream log;
  auto translator = make_translator(log, short_outputs(), -1e4);  // a model call never ends early
  const auto results = translator.translate({"", "a dog runs .", "   "});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[0].best(), "");
  EXPECT_TRUE(results[0].nbest[0].tokens.empty());
  EXPECT_FALSE(results[1].nbest[0].tokens.empty());
  EXPECT_TRUE(results[2].nbest[0].tokens.empty());
  EXPECT_EQ(log.str(), "");
}

TEST(Translator, MatchesDecodeAllInInputOrder) {
  std::ostringstream log;
  auto translator = make_translator(log);
  const std::vector<std::string> lines = {"a man is carrying a red bike .", "a dog .",
                                          "two children play in the green water near a car ."};
  const auto results = translator.translate(lines);
  std::vector<std::vector<int64_t>> sources;
  for (const auto& line : lines) sources.push_back(test::fixture_tokenizer().encode_src(line));
  const auto expected = decode_all(translator.model(), sources, translator.config(), at::kCPU);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(results[i].nbest[0].tokens, expected[i][0].tokens) << i;
    EXPECT_EQ(results[i].best(), test::fixture_tokenizer().decode_tgt(expected[i][0].tokens));
  }
}

TEST(Translator, InvalidUtf8FailsOnlyThatLine) {
  std::ostringstream log;
  auto translator = make_translator(log);
  const auto results = translator.translate({"a dog .", "bad \xff byte", "a cat ."}, 10);
  EXPECT_TRUE(results[0].ok());
  EXPECT_TRUE(results[2].ok());
  ASSERT_FALSE(results[1].ok());
  EXPECT_NE(results[1].error->find("line 11"), std::string::npos) << *results[1].error;
  EXPECT_NE(results[1].error->find("invalid UTF-8 at byte 5"), std::string::npos);
  EXPECT_NE(log.str().find("line 11"), std::string::npos);
  EXPECT_EQ(results[2].best(), translator.translate({"a cat ."})[0].best());
  test::expect_error([&] { translator.translate_texts({"ok", "\xc3"}); }, "line 2");
}

TEST(Translator, LongInputIsTruncatedWithAWarning) {
  std::ostringstream log;
  auto translator = make_translator(log, short_outputs(), 0.0, 12);  // at most 11 source pieces
  std::string long_line;
  for (int i = 0; i < 8; ++i) long_line += "a dog in a green jacket . ";
  const auto results = translator.translate({long_line, "a dog ."});
  ASSERT_TRUE(results[0].ok());
  ASSERT_TRUE(results[0].warning.has_value());
  EXPECT_NE(results[0].warning->find("line 1"), std::string::npos);
  EXPECT_NE(results[0].warning->find("model.max_len - 1"), std::string::npos);
  EXPECT_NE(log.str().find("warning: line 1"), std::string::npos);
  EXPECT_FALSE(results[1].warning.has_value());
  EXPECT_LE(results[0].nbest[0].tokens.size(), 11u);
}

TEST(Translator, NbestGivesScoredHypothesesBestFirst) {
  std::ostringstream log;
  auto translator = make_translator(log, short_outputs(4, 3));
  const auto results = translator.translate({"a dog is waiting .", ""});
  ASSERT_EQ(results[0].nbest.size(), 3u);
  EXPECT_GE(results[0].nbest[0].score, results[0].nbest[1].score);
  EXPECT_GE(results[0].nbest[1].score, results[0].nbest[2].score);
  EXPECT_EQ(results[1].nbest.size(), 1u);  // empty input: one empty translation
}

// MBR reorders the beam's own candidates (decode_all's n-best with their log-probabilities) by
// expected utility, the scores become the utilities, and decode.nbest of them are kept.
TEST(Translator, MbrPicksTheBeamCandidateWithTheHighestExpectedUtility) {
  const std::vector<std::string> lines = {"a dog is waiting .", "two men ride red bikes .", ""};
  for (const std::string metric : {"bleu", "chrf"}) {
    std::ostringstream log;
    DecodeConfig config = short_outputs(4, 2);
    config.max_len_offset = 6;
    config.mbr = 4;
    config.mbr_metric = require_choice<MbrMetric>("metric", metric);
    auto translator = make_translator(log, config);
    const auto chosen = translator.translate(lines);
    DecodeConfig search = config;
    search.nbest = 4;
    for (size_t i = 0; i < 2; ++i) {
      const auto candidates =
          decode_all(translator.model(), {test::fixture_tokenizer().encode_src(lines[i])}, search,
                     at::kCPU)[0];
      ASSERT_EQ(candidates.size(), 4u);
      std::vector<std::string> texts;
      std::vector<double> log_probs;
      for (const auto& h : candidates) {
        texts.push_back(test::fixture_tokenizer().decode_tgt(h.tokens));
        log_probs.push_back(h.log_prob);
      }
      const auto utilities = mbr_expected_utilities(texts, log_probs, require_choice<MbrMetric>("metric", metric));
      const size_t best =
          size_t(std::max_element(utilities.begin(), utilities.end()) - utilities.begin());
      ASSERT_EQ(chosen[i].nbest.size(), 2u);
      EXPECT_EQ(chosen[i].best(), texts[best]) << metric;
      // (Batched and single-sentence decoding differ in the last float bits of log-probs.)
      EXPECT_NEAR(chosen[i].nbest[0].score, utilities[best], 1e-4) << metric;
      EXPECT_GE(chosen[i].nbest[0].score, chosen[i].nbest[1].score) << metric;
    }
    EXPECT_EQ(chosen[2].best(), "");
  }
}

DecodeConfig sampling(int64_t draws, int64_t nbest, int64_t mbr) {
  DecodeConfig config = short_outputs();
  config.max_len_offset = 6;
  config.sample = draws;
  config.epsilon = 0.0;
  config.nbest = nbest;
  config.mbr = mbr;
  return config;
}

TEST(Translator, SamplingGivesDistinctSamplesMostProbableFirst) {
  std::ostringstream log;
  auto translator = make_translator(log, sampling(24, 24, 0));
  const auto results = translator.translate({"a dog is waiting .", ""});
  const auto& nbest = results[0].nbest;
  ASSERT_GE(nbest.size(), 2u);  // a random model's samples differ
  ASSERT_LE(nbest.size(), 24u);
  std::set<std::string> texts;
  for (size_t i = 0; i < nbest.size(); ++i) {
    texts.insert(nbest[i].text);
    EXPECT_EQ(translator.tokenizer().decode_tgt(nbest[i].tokens), nbest[i].text);
    if (i > 0) {
      EXPECT_GE(nbest[i - 1].score, nbest[i].score);
    }
  }
  EXPECT_EQ(texts.size(), nbest.size());
  EXPECT_EQ(results[1].nbest.size(), 1u);
  // The same seed gives the same samples; the n-best is cut to decode.nbest.
  auto three = make_translator(log, sampling(24, 3, 0));
  const auto cut = three.translate({"a dog is waiting ."})[0].nbest;
  ASSERT_EQ(cut.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(cut[i].text, nbest[i].text);
}

// MBR over samples: the decode.mbr most probable distinct samples are the candidates, every draw
// a pseudo-reference of weight 1/draws (so a text drawn k times weighs k/draws).
TEST(Translator, MbrOverSamplesPicksTheHighestMonteCarloUtility) {
  const std::string line = "two men ride red bikes .";
  for (const std::string metric : {"bleu", "chrf"}) {
    std::ostringstream log;
    DecodeConfig config = sampling(16, 2, 4);
    config.mbr_metric = require_choice<MbrMetric>("metric", metric);
    auto translator = make_translator(log, config);
    const auto chosen = translator.translate({line})[0].nbest;
    const auto draws = decode_all(translator.model(), {test::fixture_tokenizer().encode_src(line)},
                                  config, at::kCPU)[0];
    ASSERT_EQ(draws.size(), 16u);
    std::map<std::string, double> weight, log_prob;
    for (const auto& h : draws) {
      const auto text = test::fixture_tokenizer().decode_tgt(h.tokens);
      weight[text] += 1.0 / 16;
      log_prob[text] = log_prob.count(text) ? std::max(log_prob[text], h.log_prob) : h.log_prob;
    }
    ASSERT_GE(weight.size(), 3u);
    std::vector<std::pair<double, std::string>> by_prob;
    for (const auto& [text, lp] : log_prob) by_prob.emplace_back(lp, text);
    std::sort(by_prob.rbegin(), by_prob.rend());
    std::vector<std::string> candidates, references;
    std::vector<double> weights;
    for (size_t i = 0; i < std::min<size_t>(4, by_prob.size()); ++i) {
      candidates.push_back(by_prob[i].second);
    }
    for (const auto& [text, w] : weight) references.push_back(text), weights.push_back(w);
    const auto utilities = mbr_expected_utilities(candidates, references, weights, require_choice<MbrMetric>("metric", metric));
    const size_t best =
        size_t(std::max_element(utilities.begin(), utilities.end()) - utilities.begin());
    ASSERT_EQ(chosen.size(), 2u);
    EXPECT_EQ(chosen[0].text, candidates[best]) << metric;
    EXPECT_NEAR(chosen[0].score, utilities[best], 1e-9) << metric;
    EXPECT_GE(chosen[0].score, chosen[1].score) << metric;
  }
}

TEST(Mbr, ReferencesWithWeightsGeneraliseTheNbestForm) {
  const std::vector<std::string> texts = {"ein Mann fährt Rad .", "ein Hund läuft .",
                                          "ein Mann fährt ein Rad ."};
  const std::vector<double> log_probs = {-1.0, -2.0, -0.5};
  std::vector<double> weights;
  double total = 0.0;
  for (const double lp : log_probs) weights.push_back(std::exp(lp)), total += std::exp(lp);
  for (double& w : weights) w /= total;
  for (const std::string metric : {"bleu", "chrf"}) {
    const auto nbest = mbr_expected_utilities(texts, log_probs, require_choice<MbrMetric>("metric", metric));
    const auto general = mbr_expected_utilities(texts, texts, weights, require_choice<MbrMetric>("metric", metric));
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_NEAR(nbest[i], general[i], 1e-9);
    // One reference of weight 1: the utility against it.
    const auto single = mbr_expected_utilities(texts, {texts[0]}, {1.0}, require_choice<MbrMetric>("metric", metric));
    EXPECT_NEAR(single[0], 100.0, 1e-9);
    EXPECT_LT(single[1], single[2]);
  }
  test::expect_error([&] { mbr_expected_utilities(texts, texts, {0.5, 0.5}, MbrMetric::kBleu); },
                     "MBR: 3 pseudo-references but 2 weights");
  test::expect_error([&] { mbr_expected_utilities(texts, texts, {0.5, 0.5, 0.5}, MbrMetric::kBleu); },
                     "MBR: the weights sum to 1.500000, not 1");
  test::expect_error([&] { mbr_expected_utilities(texts, texts, {1.5, -0.5, 0.0}, MbrMetric::kChrf); },
                     "MBR: weight -0.500000 is not >= 0");
}

TEST(Mbr, ConsensusWinsUnlessTheModelIsSureOfAnOutlier) {
  const std::vector<std::string> texts = {
      "ein Mann fährt ein rotes Fahrrad .", "ein Hund spielt im Schnee .",
      "ein Mann fährt ein rotes Rad .", "ein Mann fährt ein Fahrrad ."};
  for (const std::string metric : {"bleu", "chrf"}) {
    // Equal probabilities: the candidate closest to the others wins, the outlier loses.
    const auto even = mbr_expected_utilities(texts, {-1.0, -1.0, -1.0, -1.0}, require_choice<MbrMetric>("metric", metric));
    EXPECT_EQ(std::max_element(even.begin(), even.end()) - even.begin(), 0) << metric;
    EXPECT_EQ(std::min_element(even.begin(), even.end()) - even.begin(), 1) << metric;
    // A model all but certain of the outlier: utilities follow it (u(h, h) is the maximum).
    const auto sure = mbr_expected_utilities(texts, {-60.0, 0.0, -60.0, -60.0}, require_choice<MbrMetric>("metric", metric));
    EXPECT_EQ(std::max_element(sure.begin(), sure.end()) - sure.begin(), 1) << metric;
    EXPECT_NEAR(sure[1], 100.0, 1e-6) << metric;
    // Softmax is shift-invariant: huge log-probabilities do not overflow.
    EXPECT_EQ(mbr_expected_utilities(texts, {-1e4 - 1, -1e4 - 1, -1e4 - 1, -1e4 - 1}, require_choice<MbrMetric>("metric", metric)),
              even);
  }
  EXPECT_NEAR(sentence_chrf(texts[0], texts[2]), corpus_chrf({texts[0]}, {texts[2]}).score, 1e-9);
  test::expect_error([&] { mbr_expected_utilities(texts, {0.0}, MbrMetric::kBleu); }, "4 candidates but 1");
  test::expect_error(
      [&] {
        mbr_expected_utilities(texts, {0, 0, 0, 0}, require_choice<MbrMetric>("MBR metric", "ter"));
      },
      "MBR metric 'ter' is not valid: choose one of bleu, chrf");
}

TEST(Translator, AttentionHasOneRowPerTargetPieceAndOneColumnPerSourcePiece) {
  std::ostringstream log;
  auto translator = make_translator(log);
  const std::string source = "a dog in a green jacket .";
  const auto best = translator.translate({source})[0].nbest[0].tokens;
  const auto map = translator.attention(source, best);
  const auto src_len = static_cast<int64_t>(test::fixture_tokenizer().encode_src(source).size());
  ASSERT_EQ(map.weights.sizes(),
            (std::vector<int64_t>{static_cast<int64_t>(best.size()) + 1, src_len + 1}));
  EXPECT_EQ(static_cast<int64_t>(map.src_pieces.size()), src_len + 1);
  EXPECT_EQ(map.tgt_pieces.size(), best.size() + 1);
  EXPECT_EQ(map.src_pieces.back(), "</s>");
  EXPECT_TRUE(torch::allclose(map.weights.sum(1), torch::ones({map.weights.size(0)}), 1e-4));
  const auto head = translator.attention(source, best, {0, 1});  // first layer, head 1
  EXPECT_TRUE(torch::allclose(head.weights.sum(1), torch::ones({head.weights.size(0)}), 1e-4));
  EXPECT_FALSE(torch::allclose(head.weights, map.weights));
  test::expect_error([&] { translator.attention(source, best, {2, -1}); }, "layer 2");
  test::expect_error([&] { translator.attention(source, best, {-1, 4}); }, "head 4");
}

TEST(Translator, RunsOnASavedCheckpoint) {
  const auto dir = test::temp_dir("translator_ckpt");
  auto model = test::fixture_model(5);
  save_checkpoint(dir / "best.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  auto loaded = load_checkpoint(dir, at::kCPU);
  Translator original(model, test::fixture_tokenizer(), short_outputs(), at::kCPU);
  Translator restored(loaded.model, loaded.tokenizer, short_outputs(), at::kCPU);
  const std::vector<std::string> lines = {"a man is cleaning a car .", "a red bike ."};
  EXPECT_EQ(restored.translate_texts(lines), original.translate_texts(lines));
}

/// Runs `nmt ARGS` through the shell with `input` on stdin; returns the exit code.
struct Run {
  int code;
  std::string out, err;
};
Run run_nmt(const std::string& args, const std::string& input, const fs::path& dir) {
  std::ofstream(dir / "stdin", std::ios::binary) << input;
  const std::string command = std::string(NMT_BINARY) + " " + args + " < " +
                              (dir / "stdin").string() + " > " + (dir / "stdout").string() +
                              " 2> " + (dir / "stderr").string();
  const int status = std::system(command.c_str());
  const auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "stdout"),
          slurp(dir / "stderr")};
}

TEST(TranslateCli, StdinKeepsLineOrderAndReportsBadLines) {
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

TEST(TranslateCli, MissingCheckpointIsOneClearLine) {
  const auto dir = test::temp_dir("translate_cli_missing");
  const auto run =
      run_nmt("translate --checkpoint " + (dir / "nope.pt").string() + " hello", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: " + (dir / "nope.pt").string() + ": checkpoint not found\n");
}

TEST(EvaluateCli, SeveralSplitsInOneRunWithJsonScores) {
  const auto dir = test::temp_dir("evaluate_cli");
  auto model = test::fixture_model(7, /*eos_bias=*/2.0);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const auto run =
      run_nmt("evaluate --device cpu --checkpoint " + (dir / "m.pt").string() +
                  " --split tiny_val,tiny --beam 2 --json " + (dir / "scores.json").string(),
              "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  std::ifstream in(dir / "scores.json");
  const auto scores = nlohmann::json::parse(in);
  ASSERT_EQ(scores.size(), 2u);
  for (const auto& [index, split] : {std::pair{0, "tiny_val"}, {1, "tiny"}}) {
    const auto& entry = scores[index];
    EXPECT_EQ(entry["test_set"], split);
    EXPECT_EQ(entry["beam"], 2);
    // The scores are those of the hypotheses written next to the checkpoint.
    const auto hyps = read_lines(dir / ("hyp." + std::string(split) + ".de"));
    const auto refs = read_lines(fs::path(NMT_FIXTURES_DIR) / (std::string(split) + ".de"));
    EXPECT_NEAR(entry["bleu"].get<double>(), corpus_bleu(hyps, refs).score, 1e-9);
    EXPECT_NEAR(entry["bleu_lowercase"].get<double>(), corpus_bleu(hyps, refs, true).score, 1e-9);
    EXPECT_NEAR(entry["chrf"].get<double>(), corpus_chrf(hyps, refs).score, 1e-9);
  }
  EXPECT_EQ(run_nmt("evaluate --checkpoint " + (dir / "m.pt").string() +
                        " --split tiny_val,tiny --output x.de",
                    "", dir)
                .code,
            2);
}

TEST(EvaluateCli, HypDirKeepsHypothesesApartFromTheCheckpoint) {
  const auto dir = test::temp_dir("evaluate_cli_hyp_dir");
  auto model = test::fixture_model(7, /*eos_bias=*/2.0);
  save_checkpoint(dir / "m.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  const std::string evaluate = "evaluate --device cpu --checkpoint " + (dir / "m.pt").string() +
                               " --split tiny_val,tiny --beam 2 --json " +
                               (dir / "scores.json").string();
  const auto run = run_nmt(evaluate + " --hyp-dir " + (dir / "avg10").string(), "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  std::ifstream in(dir / "scores.json");
  const auto scores = nlohmann::json::parse(in);
  ASSERT_EQ(scores.size(), 2u);
  for (const auto& [index, split] : {std::pair{0, "tiny_val"}, {1, "tiny"}}) {
    const std::string name = "hyp." + std::string(split) + ".de";
    EXPECT_FALSE(fs::exists(dir / name));
    const auto hyps = read_lines(dir / "avg10" / name);
    const auto refs = read_lines(fs::path(NMT_FIXTURES_DIR) / (std::string(split) + ".de"));
    EXPECT_NEAR(scores[index]["bleu"].get<double>(), corpus_bleu(hyps, refs).score, 1e-9);
  }
  const auto both = run_nmt(evaluate + " --hyp-dir x --output x.de", "", dir);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--hyp-dir"), std::string::npos) << both.err;
  // The conflict is reported before the checkpoint is read: a missing one does not mask it.
  const auto early = run_nmt("evaluate --checkpoint " + (dir / "missing.pt").string() +
                                 " --split tiny --hyp-dir x --output x.de",
                             "", dir);
  EXPECT_EQ(early.code, 2);
  EXPECT_NE(early.err.find("--hyp-dir"), std::string::npos) << early.err;
}

TEST(BenchCli, UnknownBenchmarkNamesTheAvailableOnes) {
  const auto dir = test::temp_dir("bench_cli");
  const auto run = run_nmt("bench fly", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("unknown benchmark 'fly'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("decode"), std::string::npos);
}

}  // namespace
}  // namespace nmt
