// train/validation.cpp: validation loss, greedy BLEU/chrF and the metric direction.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/special_ids.h"
#include "data/batching.h"
#include "data/dataset.h"
#include "decode/evaluation.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "test_util.h"
#include "text/document.h"
#include "train/run_log.h"
#include "train/validation.h"
#include "train/validation_recorder.h"

namespace nmt {
namespace {

TEST(Validation, MetricDirection) {
  const double nan = std::nan("");
  EXPECT_TRUE(improves(Metric::kBleu, 20.0, nan));
  EXPECT_TRUE(improves(Metric::kBleu, 21.0, 20.0));
  EXPECT_FALSE(improves(Metric::kBleu, 19.0, 20.0));
  EXPECT_TRUE(improves(Metric::kLoss, 1.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, 2.5, 2.0));
  EXPECT_FALSE(improves(Metric::kLoss, nan, 2.0));
}

/// The fixture's validation split over the fixture tokenizer.
EncodedSplit valid_split() {
  return load_split(test::fixture_config().data, "tiny_val", test::fixture_tokenizer());
}

// The validation loss is LibTorch's cross-entropy (no smoothing) over every real target token of
// the split, padding ignored: computed here on the whole split as one padded batch, while
// validation batches it its own way (by decode.batch_tokens, several batches here).
TEST(Validation, LossIsCrossEntropyWithPaddingIgnored) {
  auto model = test::fixture_model(7);
  const auto split = valid_split();
  std::vector<size_t> all(split.examples.size());
  std::iota(all.begin(), all.end(), size_t{0});
  const Batch batch = collate(split.examples, all);
  ASSERT_GT(batch.tgt_out.eq(kPadId).sum().item<int64_t>(), 0);  // there is padding to ignore
  double expected = 0.0;
  {
    torch::NoGradGuard no_grad;
    const auto logits = model->forward(batch.src, batch.tgt_in);  // [rows, tgt_len, vocab]
    namespace F = torch::nn::functional;
    expected = F::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.tgt_out.reshape(-1),
                                F::CrossEntropyFuncOptions().ignore_index(kPadId))
                   .item<double>();
  }
  Config config = test::fixture_config();
  config.decode.batch_tokens = 100000;  // one batch of every pair: real padding
  for (const bool bleu : {false, true}) {
    config.train.valid_bleu = bleu;
    const auto result = validate(model, test::fixture_tokenizer(), split, config, at::kCPU);
    EXPECT_NEAR(result.loss(), expected, 1e-6 * expected) << "valid_bleu " << bleu;
    EXPECT_DOUBLE_EQ(result.get("ppl"), std::exp(result.loss()));
    EXPECT_EQ(std::isnan(result.get("bleu")), !bleu);
  }
}

// Validation decodes greedily whatever decode.* asks: its BLEU and chrF are those of greedy
// translations (up to train.valid_max_len_offset), and the beam-4 MBR the decode section asks
// for would have scored otherwise on this model.
TEST(Validation, BleuIsGreedyWhateverTheDecodeSectionAsks) {
  auto model = test::fixture_model(7);
  const auto split = valid_split();
  Config config = test::fixture_config();
  config.train.valid_bleu = true;
  config.train.valid_max_len_offset = 6;
  apply_overrides(config, {"decode.beam=4", "decode.mbr=4", "decode.mbr_metric=chrf"});
  const auto result = validate(model, test::fixture_tokenizer(), split, config, at::kCPU);
  const auto scores = [&](const DecodeConfig& decode) {
    Translator translator(model, test::fixture_tokenizer(), decode, at::kCPU);
    const auto hyps = translator.translate_texts(split.src_text);
    return std::pair{corpus_bleu(hyps, split.tgt_text).score,
                     corpus_chrf(hyps, split.tgt_text).score};
  };
  DecodeConfig greedy;
  greedy.max_len_offset = 6;
  const auto [greedy_bleu, greedy_chrf] = scores(greedy);
  EXPECT_DOUBLE_EQ(result.get("bleu"), greedy_bleu);
  EXPECT_DOUBLE_EQ(result.get("chrf"), greedy_chrf);
  DecodeConfig mbr = config.decode;
  mbr.max_len_offset = 6;
  const auto mbr_chrf = scores(mbr).second;
  EXPECT_NE(result.get("chrf"), mbr_chrf);
  EXPECT_GT(greedy_chrf, 0.0);
}

/// A metric that is not built in: the hypotheses' length over the references' in characters
/// (BLEU's brevity, at a glance). It reads the pass's greedy translations, as BLEU does.
class LengthRatioValidator : public Validator {
 public:
  explicit LengthRatioValidator(int* decodes) : decodes_(decodes) {}
  std::vector<ScoreSpec> specs() const override { return {{"len_ratio", "len", 3}}; }
  std::vector<double> measure(ValidationPass& pass) const override {
    const auto& hyps = pass.hypotheses();
    const auto& again = pass.hypotheses();  // decoded once, whoever asks
    *decodes_ += &hyps == &again ? 1 : 2;
    double hyp = 0.0, ref = 0.0;
    for (size_t i = 0; i < hyps.size(); ++i) {
      hyp += double(hyps[i].size());
      ref += double(pass.set().scored.tgt[i].size());
    }
    return {hyp / ref};
  }

 private:
  int* decodes_;
};

/// Keeps the greedy translations of the pass it measures.
class HypothesesValidator : public Validator {
 public:
  explicit HypothesesValidator(std::vector<std::string>* kept) : kept_(kept) {}
  std::vector<ScoreSpec> specs() const override { return {{"lines", "lines", 0}}; }
  std::vector<double> measure(ValidationPass& pass) const override {
    *kept_ = pass.hypotheses();
    return {double(kept_->size())};
  }

 private:
  std::vector<std::string>* kept_;
};

// Training keeps the pairs of at most data.max_len pieces a side, and the validation loss reads
// those; validation BLEU and chrF translate every pair, a line longer than that as `nmt
// evaluate` translates a test line (split at clause punctuation, then between words, and the
// parts' translations joined), so they score what a user would get, on the whole set.
TEST(Validation, BleuTranslatesEveryLineAsEvaluateDoesAndTheLossReadsThoseKept) {
  auto model = test::fixture_model(7);
  const Tokenizer& tokenizer = test::fixture_tokenizer();
  Config config = test::fixture_config();
  config.data.max_len = 16;
  config.train.valid_bleu = true;
  const CorpusSpec& corpus = config.data.valid[0];
  const ValidationSet set = load_validation_set(config.data, corpus, tokenizer, "val");
  const EncodedSplit kept = load_corpus(config.data, corpus, tokenizer);
  const EncodedSplit every = load_corpus(config.data, corpus, tokenizer, /*filter_long=*/false);
  ASSERT_GT(kept.examples.size(), 0u);
  ASSERT_LT(kept.examples.size(), every.examples.size());  // lines too long to train on
  EXPECT_EQ(set.name, "val");
  EXPECT_EQ(set.tgt_lang, config.data.tgt_lang);
  EXPECT_EQ(set.split.src_text, kept.src_text);
  EXPECT_EQ(set.scored.src, every.src_text);
  EXPECT_EQ(set.scored.tgt, every.tgt_text);

  std::vector<std::string> validated;
  Validators validators = make_validators(config.train);
  validators.push_back(std::make_unique<HypothesesValidator>(&validated));
  const Scores scores = validate(model, tokenizer, set, config, at::kCPU, validators);

  DecodeConfig greedy = config.decode.plain_search(1);
  greedy.max_len_offset = config.train.valid_max_len_offset;
  Translator translator(model, tokenizer, greedy, at::kCPU);
  translator.set_log(nullptr);
  const TextOptions whole_lines =
      whole_line_options(config.data.src_lang, config.data.tgt_lang, size_t(config.data.max_len));
  std::vector<std::string> evaluated;
  for (const auto& result : translate_text(translator, every.src_text, whole_lines, 1,
                                           std::numeric_limits<size_t>::max())) {
    evaluated.push_back(result.best());
  }
  EXPECT_EQ(validated, evaluated);
  EXPECT_DOUBLE_EQ(scores.get("bleu"), corpus_bleu(evaluated, every.tgt_text).score);
  EXPECT_DOUBLE_EQ(scores.get("chrf"), corpus_chrf(evaluated, every.tgt_text).score);
  // Read whole, a line too long translates otherwise.
  size_t longest = 0;
  for (size_t i = 0; i < every.examples.size(); ++i) {
    if (every.examples[i].src.size() > every.examples[longest].src.size()) longest = i;
  }
  ASSERT_GT(every.examples[longest].src.size(), size_t(config.data.max_len));
  EXPECT_NE(validated[longest], translator.translate_texts({every.src_text[longest]})[0]);
  EXPECT_FALSE(validated[longest].empty());

  const double loss =
      teacher_forced_loss(model, kept.examples, config.decode.batch_tokens, at::kCPU).loss();
  EXPECT_NEAR(scores.loss(), loss, 1e-6 * loss);
  EXPECT_NE(
      scores.loss(),
      teacher_forced_loss(model, every.examples, config.decode.batch_tokens, at::kCPU).loss());
}

std::vector<nlohmann::json> read_records(const std::filesystem::path& file) {
  std::vector<nlohmann::json> records;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

// A new metric is one Validator: added to the list, its value is measured beside the others,
// averaged over the sets, and written to the record and the log line by the one recorder, with
// no change to the recorder or the trainer.
TEST(Validation, ANewValidatorReachesTheRecordAndTheLogLine) {
  auto model = test::fixture_model(7);
  Config config = test::fixture_config();
  config.train.valid_bleu = true;
  Validators validators = make_validators(config.train);
  int decodes = 0;
  validators.push_back(std::make_unique<LengthRatioValidator>(&decodes));
  const EncodedSplit split = valid_split();
  EncodedSplit half = split;  // a second set: the first half of the pairs
  half.examples.resize(split.examples.size() / 2);
  half.src_text.resize(half.examples.size());
  half.tgt_text.resize(half.examples.size());
  const std::vector<ValidationSet> sets{{"val", config.data.tgt_lang, split},
                                        {"half", config.data.tgt_lang, half}};
  const ValidationSummary summary =
      validate_sets(model, test::fixture_tokenizer(), sets, config, at::kCPU, validators);
  EXPECT_EQ(decodes, 2);  // one decoding per set
  ASSERT_EQ(summary.each.size(), 2u);
  const double ratio = summary.each[0].get("len_ratio");
  EXPECT_GT(ratio, 0.0);
  EXPECT_DOUBLE_EQ(summary.mean.get("len_ratio"), (ratio + summary.each[1].get("len_ratio")) / 2);
  EXPECT_DOUBLE_EQ(summary.mean.get("bleu"),
                   summary.each[0].get("bleu") / 2 + summary.each[1].get("bleu") / 2);
  // Perplexity is not averaged: that of the mean loss.
  EXPECT_DOUBLE_EQ(summary.mean.get("ppl"), std::exp(summary.mean.loss()));
  EXPECT_TRUE(std::isnan(summary.mean.get("ter")));  // not measured

  const test::TempDir dir("validation_recorder");
  std::ostringstream console;
  {
    RunLog log(dir, console);
    const ValidationRecorder recorder(log, specs_of(validators), "bleu");
    recorder.write({{"kind", "valid"}, {"step", 7}}, "valid step 7", summary.mean,
                   {{"half", &summary.each[1]}}, " | new best");
  }
  const auto records = read_records(dir / "metrics.jsonl");
  ASSERT_EQ(records.size(), 1u);
  const auto& record = records[0];
  EXPECT_EQ(record["kind"], "valid");
  EXPECT_EQ(record["step"], 7);
  for (const char* key : {"loss", "ppl", "bleu", "chrf", "len_ratio"}) {
    ASSERT_TRUE(record.contains(key)) << key;
    EXPECT_DOUBLE_EQ(record[key].get<double>(), summary.mean.get(key)) << key;
    ASSERT_TRUE(record.contains(std::string(key) + "_half")) << key;
    EXPECT_DOUBLE_EQ(record[std::string(key) + "_half"].get<double>(), summary.each[1].get(key));
  }
  EXPECT_DOUBLE_EQ(record["seconds"].get<double>(), summary.mean.seconds);
  const std::string line = console.str();
  char ratio_text[32];
  std::snprintf(ratio_text, sizeof ratio_text, "%.3f", summary.mean.get("len_ratio"));
  EXPECT_EQ(line.rfind("valid step 7 | loss ", 0), 0u) << line;
  EXPECT_NE(line.find(" | chrF "), std::string::npos) << line;
  EXPECT_NE(line.find(std::string(" | len ") + ratio_text + " | half BLEU "), std::string::npos)
      << line;
  EXPECT_NE(line.find(" s | new best\n"), std::string::npos) << line;
}

}  // namespace
}  // namespace nmt
