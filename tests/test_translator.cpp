// decode/translator.cpp: text in, text out; n-best, MBR, sampling, attention, checkpoints.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/precision.h"
#include "data/corpus.h"
#include "decode/mbr.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "text/document.h"
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

// Workers decode the same batches on their own threads: the same hypotheses and scores as one,
// greedy and beam, and under bf16 autocast too (each worker takes the caller's autocast: a
// worker without it would score in fp32).
// Several workers decode the same tapered batches whatever their number (one worker decodes
// whole batches, which float rounding may translate differently).
TEST(Translator, WorkersGiveTheSameWhateverTheirNumber) {
  Seq2Seq model = test::fixture_model(4, /*eos_bias=*/1.0);
  model->eval();
  std::vector<std::vector<int64_t>> sources;
  for (int i = 0; i < 24; ++i) {
    std::vector<int64_t> ids;
    for (int j = 0; j <= i % 7; ++j) ids.push_back(4 + (i * 7 + j * 3) % 50);
    sources.push_back(ids);
  }
  for (int64_t beam : {1, 3}) {
    DecodeConfig config = short_outputs(beam, beam);
    config.batch_tokens = 40;  // many small batches
    for (bool bf16 : {false, true}) {
      AutocastGuard autocast(bf16 ? Precision::kBf16 : Precision::kFp32, at::kCPU);
      const auto one = decode_all(model, sources, config, at::kCPU, nullptr, /*workers=*/2);
      const auto three = decode_all(model, sources, config, at::kCPU, nullptr, /*workers=*/3);
      ASSERT_EQ(one.size(), three.size());
      for (size_t i = 0; i < one.size(); ++i) {
        ASSERT_EQ(one[i].size(), three[i].size()) << i;
        for (size_t k = 0; k < one[i].size(); ++k) {
          EXPECT_EQ(one[i][k].tokens, three[i][k].tokens) << "beam " << beam << " source " << i;
          EXPECT_EQ(one[i][k].score, three[i][k].score) << "beam " << beam << " bf16 " << bf16;
        }
      }
    }
  }
}

// translate_text decodes a paragraph's sentences a bounded number at a time: in passes of one,
// each sentence is decoded exactly as it is alone, and the paragraph is their translations in
// order; in passes of two the last pass is partial, and with outputs that never end early (as
// long as the search allows, whatever the batch) no sentence's tokens are missing.
TEST(Translator, TextIsDecodedInPassesAndJoinedInOrder) {
  std::ostringstream log;
  auto translator = make_translator(log);
  auto never_ending = make_translator(log, short_outputs(), -1e4);
  const std::vector<std::string> sentences = {"A man is carrying a red bike.", "A dog.",
                                              "Two children play in the green water near a car.",
                                              "A dog runs.", "Three men sit."};
  std::string paragraph, expected;
  size_t tokens = 0;
  for (const auto& sentence : sentences) {
    paragraph += (paragraph.empty() ? "" : " ") + sentence;
    const auto alone = translate_text(translator, {sentence}, TextOptions{});
    expected += (expected.empty() ? "" : " ") + alone.at(0).best();
    tokens +=
        translate_text(never_ending, {sentence}, TextOptions{}).at(0).nbest.at(0).tokens.size();
  }
  const auto whole = translate_text(translator, {paragraph}, TextOptions{}, 1, 1);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].best(), expected);
  const auto in_twos = translate_text(never_ending, {paragraph}, TextOptions{}, 1, 2);
  EXPECT_EQ(in_twos.at(0).nbest.at(0).tokens.size(), tokens);
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
    config.mbr_metric = require_choice<MbrMetric>("mbr_metric", metric);
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
      const auto utilities =
          mbr_expected_utilities(texts, log_probs, require_choice<MbrMetric>("metric", metric));
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
  config.search = SearchKind::kSample;
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
    config.mbr_metric = require_choice<MbrMetric>("mbr_metric", metric);
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
    const auto utilities = mbr_expected_utilities(candidates, references, weights,
                                                  require_choice<MbrMetric>("metric", metric));
    const size_t best =
        size_t(std::max_element(utilities.begin(), utilities.end()) - utilities.begin());
    ASSERT_EQ(chosen.size(), 2u);
    EXPECT_EQ(chosen[0].text, candidates[best]) << metric;
    EXPECT_NEAR(chosen[0].score, utilities[best], 1e-9) << metric;
    EXPECT_GE(chosen[0].score, chosen[1].score) << metric;
  }
}

TEST(Translator, AttentionHasOneRowPerTargetPieceAndOneColumnPerSourcePiece) {
  std::ostringstream log;
  auto translator = make_translator(log);
  const std::string source = "a dog in a green jacket .";
  const auto best = translator.translate({source})[0].nbest[0].tokens;
  const auto map = attention_map(translator.teacher_forcing(), source, best);
  const auto src_len = static_cast<int64_t>(test::fixture_tokenizer().encode_src(source).size());
  ASSERT_EQ(map.weights.sizes(),
            (std::vector<int64_t>{static_cast<int64_t>(best.size()) + 1, src_len + 1}));
  EXPECT_EQ(static_cast<int64_t>(map.src_pieces.size()), src_len + 1);
  EXPECT_EQ(map.tgt_pieces.size(), best.size() + 1);
  EXPECT_EQ(map.src_pieces.back(), "</s>");
  EXPECT_TRUE(torch::allclose(map.weights.sum(1), torch::ones({map.weights.size(0)}), 1e-4));
  const auto head =
      attention_map(translator.teacher_forcing(), source, best, {0, 1});  // first layer, head 1
  EXPECT_TRUE(torch::allclose(head.weights.sum(1), torch::ones({head.weights.size(0)}), 1e-4));
  EXPECT_FALSE(torch::allclose(head.weights, map.weights));
  test::expect_error(
      [&] {
        attention_map(translator.teacher_forcing(), source, best, {2, -1});
      },
      "layer 2");
  test::expect_error(
      [&] {
        attention_map(translator.teacher_forcing(), source, best, {-1, 4});
      },
      "head 4");
}

TEST(Translator, AttentionIndicesOutOfRangeAreOneErrorNamingTheValidRange) {
  std::ostringstream log;
  auto translator = make_translator(log);
  const std::string source = "a dog runs .";
  const auto best = translator.translate({source})[0].nbest[0].tokens;
  const auto& model = translator.model()->config();
  const auto layers = std::to_string(model.decoder_layers);
  const auto heads = std::to_string(model.n_heads);
  // A head below -1 used to average all heads silently, as -1 does.
  test::expect_error(
      [&] {
        attention_map(translator.teacher_forcing(), source, best, {-1, -2});
      },
      "attention head -2 is out of range: the model has " + heads + " heads (valid: -1.." +
          std::to_string(model.n_heads - 1));
  test::expect_error(
      [&] {
        attention_map(translator.teacher_forcing(), source, best, {-model.decoder_layers - 1, -1});
      },
      "attention layer " + std::to_string(-model.decoder_layers - 1) +
          " is out of range: the model has " + layers + " layers (valid: -" + layers + ".." +
          std::to_string(model.decoder_layers - 1));
  // Every index in the ranges is taken: counting from the end reaches the first layer.
  const auto first = attention_map(translator.teacher_forcing(), source, best, {0, 0});
  const auto from_end =
      attention_map(translator.teacher_forcing(), source, best, {-model.decoder_layers, 0});
  EXPECT_TRUE(torch::equal(first.weights, from_end.weights));
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
}  // namespace
}  // namespace nmt
