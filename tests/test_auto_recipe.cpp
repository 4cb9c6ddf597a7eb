// train/auto_recipe.h: "auto" keys sized from the corpus and the budget, the rules pinned on
// made-up corpus profiles; core/config.h's reading of "auto"; nmt train with "auto" end to end
// (the log and config.json give every choice, a resume keeps them).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "core/cpu_load.h"
#include "core/device.h"
#include "core/error.h"
#include "core/precision.h"
#include "cpu_load_test_util.h"
#include "test_util.h"
#include "train/auto_recipe.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers
using nlohmann::json;

/// A config whose every auto-sized key is "auto", with a time budget of `minutes`.
Config all_auto(double minutes) {
  Config config = config_from_json(
      json{{"model",
            {{"d_model", "auto"},
             {"n_heads", "auto"},
             {"encoder_layers", "auto"},
             {"decoder_layers", "auto"},
             {"d_ff", "auto"},
             {"dropout", "auto"}}},
           {"data", {{"vocab_size", "auto"}, {"normalization", "auto"}, {"batch_tokens", "auto"}}},
           {"train",
            {{"lr", "auto"},
             {"warmup", "auto"},
             {"label_smoothing", "auto"},
             {"max_epochs", 0},
             {"max_minutes", minutes}}}},
      "test");
  return config;
}

/// A corpus like Multi30k en-de scaled to `pairs` pairs: 66 source and 66 target characters
/// (bytes) per pair, alphabets of 100 characters.
CorpusProfile latin_corpus(int64_t pairs) {
  CorpusProfile corpus;
  corpus.pairs = pairs;
  corpus.src_bytes = corpus.src_chars = 66 * pairs;
  corpus.tgt_bytes = corpus.tgt_chars = 66 * pairs;
  corpus.src_alphabet = corpus.tgt_alphabet = 90;
  corpus.joint_alphabet = 100;
  return corpus;
}

/// The speed of this kind of host (2 cores with AMX): 240 GFLOP/s of model matmuls.
const HostSpeed kHost{240e9, "test"};

Config sized(Config config, const CorpusProfile& corpus, const HostSpeed& host = kHost) {
  size_recipe(config, corpus, host);
  EXPECT_TRUE(config.auto_keys.empty());
  config.validate();
  return config;
}

std::string why(const Config& config, const std::string& key) {
  for (const auto& choice : config.auto_choices) {
    if (choice.key == key) return choice.why;
  }
  return "";
}

TEST(AutoConfig, AutoValuesAreKeysToSizeAndWrittenBackAsAuto) {
  const Config config = all_auto(10);
  EXPECT_EQ(config.auto_keys.size(), auto_sized_keys().size());
  const json written = config_to_json(config);
  EXPECT_EQ(written["data"]["vocab_size"], "auto");
  EXPECT_EQ(written["train"]["warmup"], "auto");
  EXPECT_EQ(config_from_json(written, "again").auto_keys.size(), auto_sized_keys().size());
  // Keys with their own "auto" (train.device) keep it; "auto" where nothing sizes it is an error
  // that lists the keys that take it.
  EXPECT_EQ(config_from_json(json{{"train", {{"device", "auto"}}}}, "t").train.device, "auto");
  try {
    config_from_json(json{{"model", {{"max_len", "auto"}}}}, "t");
    FAIL() << "model.max_len = \"auto\" was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the keys that take \"auto\": data.vocab_size"),
              std::string::npos)
        << e.what();
  }
}

TEST(AutoConfig, AnExplicitValueOverAutoWinsAndIsRecorded) {
  const auto dir = temp_dir("auto_layers");
  std::ofstream(dir / "base.json") << R"({"data": {"vocab_size": "auto", "batch_tokens": "auto"},
                                          "model": {"dropout": "auto"}})";
  std::ofstream(dir / "mine.json") << R"({"inherit": "base.json", "data": {"vocab_size": 6000}})";
  Config config = load_config(dir / "mine.json");
  EXPECT_EQ(config.data.vocab_size, 6000);
  EXPECT_EQ(config.auto_keys, (std::vector<std::string>{"data.batch_tokens", "model.dropout"}));
  ASSERT_EQ(config.auto_choices.size(), 1u);
  EXPECT_EQ(config.auto_choices[0].key, "data.vocab_size");
  EXPECT_EQ(config.auto_choices[0].value, "6000");
  EXPECT_NE(config.auto_choices[0].why.find("mine.json"), std::string::npos);
  apply_overrides(config, {"model.dropout=0.3", "train.lr=auto"});
  EXPECT_EQ(config.model.dropout, 0.3);
  EXPECT_EQ(config.auto_keys, (std::vector<std::string>{"data.batch_tokens", "train.lr"}));
  ASSERT_EQ(config.auto_choices.size(), 2u);
  EXPECT_EQ(config.auto_choices[1].key, "model.dropout");
  EXPECT_NE(config.auto_choices[1].why.find("--set"), std::string::npos);
  // Sizing leaves the explicit values alone.
  const Config done = sized(config, latin_corpus(29000));
  EXPECT_EQ(done.data.vocab_size, 6000);
  EXPECT_EQ(done.model.dropout, 0.3);
}

TEST(AutoRecipe, AtTheTunedPointItIsTheTunedRecipe) {
  // Multi30k's 29,000 pairs for 28 epochs, the hour the recipe was tuned in.
  Config config = all_auto(0);
  config.train.max_epochs = 28;
  const Config done = sized(config, latin_corpus(29000));
  EXPECT_EQ(done.data.vocab_size, 4000);
  EXPECT_EQ(done.model.d_model, 256);
  EXPECT_EQ(done.model.n_heads, 4);
  EXPECT_EQ(done.model.encoder_layers, 3);
  EXPECT_EQ(done.model.decoder_layers, 3);
  EXPECT_EQ(done.model.d_ff, 1024);
  EXPECT_DOUBLE_EQ(done.model.dropout, 0.15);
  EXPECT_DOUBLE_EQ(done.train.label_smoothing, 0.2);
  EXPECT_EQ(done.data.batch_tokens, 2048);
  EXPECT_DOUBLE_EQ(done.train.lr, 1.5e-3);
  EXPECT_EQ(done.train.warmup.text(), "10%");
  // Every choice is recorded with its reason, and survives config.json (a resume reads it).
  EXPECT_NE(why(done, "data.vocab_size").find("sqrt"), std::string::npos);
  EXPECT_NE(why(done, "model.dropout").find("28 epochs"), std::string::npos);
  const Config reread = config_from_json(config_to_json(done), "config.json");
  EXPECT_TRUE(reread.auto_keys.empty());
  EXPECT_EQ(config_to_json(reread), config_to_json(done));
}

TEST(AutoRecipe, ShippedAutoConfigIsTheDefaultRecipeAtTheTunedPoint) {
  const std::string configs = std::string(NMT_SOURCE_DIR) + "/configs/";
  Config config = load_config(configs + "auto.json");
  EXPECT_EQ(config.auto_keys.size(), auto_sized_keys().size());
  config.train.max_minutes = 0;
  config.train.max_epochs = 28;
  const json done = config_to_json(sized(config, latin_corpus(29000)));
  const json tuned = config_to_json(load_config(configs + "multi30k_en_de.json"));
  for (const auto& key : auto_sized_keys()) {
    const auto dot = key.find('.');
    const std::string section = key.substr(0, dot), name = key.substr(dot + 1);
    EXPECT_EQ(done[section][name], tuned[section][name]) << key;
  }
}

TEST(AutoRecipe, ALargerCorpusGetsALargerVocabulary) {
  Config config = all_auto(0);
  config.train.max_epochs = 20;  // a budget that sees every corpus whole
  const Config small = sized(config, latin_corpus(3000));
  const Config medium = sized(config, latin_corpus(29000));
  const Config large = sized(config, latin_corpus(200000));
  EXPECT_EQ(small.data.vocab_size, 2000);  // 4,000 x sqrt(0.1) = 1,283: the floor
  EXPECT_EQ(medium.data.vocab_size, 4000);
  EXPECT_EQ(large.data.vocab_size, 10500);  // 4,000 x sqrt(6.9) = 10,507
  // Ten minutes reach a fifth of a million pairs: the vocabulary is sized for that fifth.
  const Config huge = sized(config, latin_corpus(1000000));
  config.train.max_epochs = 0;
  config.train.max_minutes = 10;
  const Config short_run = sized(config, latin_corpus(1000000));
  EXPECT_EQ(huge.data.vocab_size, 23500);
  EXPECT_LT(short_run.data.vocab_size, 12000);
  EXPECT_NE(why(short_run, "data.vocab_size").find("the budget reaches"), std::string::npos);
}

TEST(AutoRecipe, TheVocabularyHoldsTheAlphabet) {
  Config config = all_auto(60);
  CorpusProfile corpus = latin_corpus(20000);
  corpus.tgt_alphabet = 5000;  // a Chinese target
  corpus.joint_alphabet = 5100;
  const Config done = sized(config, corpus);
  EXPECT_EQ(done.data.vocab_size, 6000);  // 5,100 + 500, in 500s
  EXPECT_NE(why(done, "data.vocab_size").find("alphabet"), std::string::npos);
}

TEST(AutoRecipe, FullWidthPunctuationInTheTargetKeepsTheTextAsWritten) {
  CorpusProfile chinese = latin_corpus(20000);
  EXPECT_EQ(sized(all_auto(10), chinese).data.normalization, Normalization::kNmtNfkc);
  chinese.tgt_fullwidth = chinese.tgt_chars / 15;  // modern Chinese: a "，" in every 15
  const Config done = sized(all_auto(10), chinese);
  EXPECT_EQ(done.data.normalization, Normalization::kIdentity);
  EXPECT_NE(why(done, "data.normalization").find("full-width"), std::string::npos);
  // A few in an English target (a pasted "？") stay under 1 in 1,000.
  chinese.tgt_fullwidth = chinese.tgt_chars / 2000;
  EXPECT_EQ(sized(all_auto(10), chinese).data.normalization, Normalization::kNmtNfkc);
}

TEST(AutoRecipe, RegularisationFollowsTheEpochsTheBudgetAllows) {
  const CorpusProfile corpus = latin_corpus(29000);
  const Config ten = sized(all_auto(10), corpus);
  const Config hour = sized(all_auto(60), corpus);
  Config many = all_auto(0);
  many.train.max_epochs = 200;  // 200 epochs: a small corpus for a long time
  const Config long_run = sized(many, corpus);
  EXPECT_LT(ten.model.dropout, hour.model.dropout);
  EXPECT_LT(hour.model.dropout, long_run.model.dropout);
  EXPECT_DOUBLE_EQ(ten.model.dropout, 0.0);  // 6 epochs: 0.15 + 0.1 x log2(6 / 28) < 0
  EXPECT_DOUBLE_EQ(long_run.model.dropout, 0.3);
  EXPECT_DOUBLE_EQ(ten.train.label_smoothing, 0.1);
  EXPECT_DOUBLE_EQ(hour.train.label_smoothing, 0.2);
  // A budget in steps: 7,415 steps of 2,048 tokens carry 0.85 x 2,048 target pieces each,
  // 12.9 million: 23.6 epochs of the corpus's estimated 546,297.
  Config steps = all_auto(0);
  steps.train.max_steps = 7415;
  const std::string reason = why(sized(steps, corpus), "model.dropout");
  EXPECT_NE(reason.find("23.63 epochs (about 12,908,032 target pieces"), std::string::npos)
      << reason;
  // Just under label smoothing's cut of 14 epochs, the reasons do not round up to it.
  Config under = all_auto(0);
  under.train.max_steps = 4384;  // x 1,740.8 target pieces = 13.97 epochs
  const Config smoothed = sized(under, corpus);
  EXPECT_DOUBLE_EQ(smoothed.train.label_smoothing, 0.1);
  EXPECT_NE(why(smoothed, "train.label_smoothing")
                .find("under 14 epochs, half the tuned hour's "
                      "28; 13.97 epochs"),
            std::string::npos)
      << why(smoothed, "train.label_smoothing");
  // The warmup is a share of whatever the budget is: it scales with it.
  EXPECT_EQ(ten.train.warmup.text(), "10%");
  EXPECT_EQ(hour.train.warmup.text(), "10%");
}

TEST(AutoRecipe, BatchesAndShapeFollowTheBudget) {
  const CorpusProfile corpus = latin_corpus(300000);
  const Config three = sized(all_auto(3), corpus);
  EXPECT_EQ(three.data.batch_tokens, 1024);  // under 4,000 steps of 2,048
  EXPECT_NEAR(three.train.lr, 1.5e-3 / std::pow(2.0, 0.25), 1e-5);
  EXPECT_EQ(three.model.d_model, 256);
  // Multi30k's size: 10 minutes (about 2,100 steps here) take more, smaller steps; the hour
  // (about 12,500) keeps the tuned batches.
  EXPECT_EQ(sized(all_auto(10), latin_corpus(29000)).data.batch_tokens, 1024);
  EXPECT_EQ(sized(all_auto(60), latin_corpus(29000)).data.batch_tokens, 2048);
  // A GPU's hour (40x this host) on 300,000 pairs: Transformer base, wider batches, lower lr.
  const Config gpu = sized(all_auto(60), corpus, HostSpeed{40 * 240e9, "test"});
  EXPECT_EQ(gpu.model.d_model, 512);
  EXPECT_EQ(gpu.model.n_heads, 8);
  EXPECT_EQ(gpu.model.encoder_layers, 6);
  EXPECT_EQ(gpu.model.d_ff, 2048);
  EXPECT_EQ(gpu.data.batch_tokens, 4096);
  EXPECT_NEAR(gpu.train.lr, 1.5e-3 * std::pow(2.0, 0.25) / std::sqrt(2.0), 1e-5);
  // The same hour on a small corpus keeps the tuned shape.
  EXPECT_EQ(sized(all_auto(60), latin_corpus(29000), HostSpeed{40 * 240e9, "t"}).model.d_model,
            256);
}

TEST(AutoRecipe, ATimeBudgetLeavesOutTheTimeValidationsTake) {
  // Validated on 1,000 pairs after each epoch of 29,000: each validation costs 1.1 x its
  // 66,000 / 3.7 + 1,000 target pieces = 20,722 pieces of training, against an epoch's 546,297.
  CorpusProfile corpus = latin_corpus(29000);
  const double alone = 546297.0, validating = 1.1 * (66000.0 / 3.7 + 1000.0);
  const auto epochs = [](const Config& config) {
    const std::string reason = why(config, "model.dropout");
    return std::stod(reason.substr(reason.rfind("; ") + 2));
  };
  const double unvalidated = epochs(sized(all_auto(60), corpus));
  corpus.valid_pairs = 1000, corpus.valid_tgt_bytes = 66000;
  const Config validated = sized(all_auto(60), corpus);
  EXPECT_NEAR(epochs(validated) / unvalidated, alone / (alone + validating), 0.002);
  EXPECT_NE(why(validated, "model.dropout").find("less 3.7% validating"), std::string::npos)
      << why(validated, "model.dropout");
  // Every 100 steps, more often than every epoch (2,048 x 0.85 x 100 = 174,080 pieces apart),
  // costs more; validations of the loss alone cost less. A budget of steps leaves them out.
  Config often = all_auto(60);
  often.train.validate_every = 100;
  EXPECT_NE(why(sized(often, corpus), "model.dropout").find("less 10.6% validating"),
            std::string::npos);
  Config loss_only = all_auto(60);
  loss_only.train.valid_bleu = false, loss_only.train.metric = Metric::kLoss;
  EXPECT_NE(why(sized(loss_only, corpus), "model.dropout").find("less 1.2% validating"),
            std::string::npos);
  Config steps = all_auto(0);
  steps.train.max_steps = 7415;
  EXPECT_EQ(why(sized(steps, corpus), "model.dropout").find("validating"), std::string::npos);
  // A validation before the first step costs its pieces once, before the share: in 5 minutes
  // (about 3.3 epochs, so the vocabulary is the whole corpus's either way) 1.1% of the budget.
  const double minutes5 = epochs(sized(all_auto(5), latin_corpus(29000)));
  const double trained = minutes5 * alone;  // target pieces of 5 minutes without validating
  Config once = all_auto(5);
  once.train.validate_at_start = true;
  const Config started = sized(once, corpus);
  EXPECT_NEAR(epochs(started) / minutes5,
              (trained - validating) / trained * alone / (alone + validating), 0.003);
  EXPECT_NE(why(started, "model.dropout")
                .find("less 3.7% validating and a validation before the first step"),
            std::string::npos)
      << why(started, "model.dropout");
}

TEST(AutoRecipe, WithoutABudgetThereIsNothingToSizeFor) {
  Config config = all_auto(0);
  try {
    size_recipe(config, latin_corpus(1000), kHost);
    FAIL() << "sized without a budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.max_minutes"), std::string::npos) << e.what();
  }
}

/// `pairs` pairs of `src_bytes` and `tgt_bytes` bytes, each sampled.
CorpusProfile sampled_corpus(int64_t pairs, int32_t src_bytes, int32_t tgt_bytes) {
  CorpusProfile corpus;
  corpus.pairs = pairs;
  corpus.src_bytes = corpus.src_chars = src_bytes * pairs;
  corpus.tgt_bytes = corpus.tgt_chars = tgt_bytes * pairs;
  corpus.sampled_bytes.assign(size_t(pairs), {src_bytes, tgt_bytes});
  return corpus;
}

TEST(AutoRecipe, TheHostsSpeedIsMeasuredOnBatchesShapedLikeTheCorpus) {
  // Training steps timed on batches of 2,048 tokens cut from the sampled pairs: sources three
  // times as long as the targets (Japanese into English) leave a batch a third of the targets.
  Config config = all_auto(10);
  config.train.device = "cpu";
  config.train.precision = Precision::kFp32;
  // Timed on the threads training will use (train.threads), not the process's.
  const int64_t threads = at::get_num_threads(), blas = blas_threads();
  at::set_num_threads(2);
  config.train.threads = 1;
  const HostSpeed even = measure_host_speed(config, sampled_corpus(1000, 37, 37), 1);
  const HostSpeed long_sources = measure_host_speed(config, sampled_corpus(1000, 111, 37), 1);
  configure_threads(threads);
  if (blas > 0) set_blas_threads(blas);
  EXPECT_GT(even.target_share, 0.8);  // 1,000 pairs of 10 + 1 pieces: 6 batches, the last short
  EXPECT_LE(even.target_share, 1.0);
  EXPECT_LT(long_sources.target_share, 0.4);  // rows of 31 source pieces carry 11 target ones
  EXPECT_GT(even.model_flops, 0.0);
  EXPECT_EQ(even.how.rfind("measured: ", 0), 0u) << even.how;
  EXPECT_NE(even.how.find("1 training steps of the tuned shape, fp32"), std::string::npos)
      << even.how;
  EXPECT_NE(even.how.find("1 thread(s)"), std::string::npos) << even.how;
  // Less of a batch is targets: more steps for the same pieces (here past 4,000 steps of 2,048).
  EXPECT_EQ(sized(all_auto(10), latin_corpus(29000), HostSpeed{240e9, "t", 0.85}).data.batch_tokens,
            1024);
  EXPECT_EQ(sized(all_auto(10), latin_corpus(29000), HostSpeed{240e9, "t", 0.28}).data.batch_tokens,
            2048);
  try {
    measure_host_speed(config, CorpusProfile{});
    FAIL() << "measured on no pairs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no pairs"), std::string::npos) << e.what();
  }
}

TEST(AutoRecipe, ABusyHostIsReportedWithTheSpeedItMeasured) {
  // Two spinning children for every core while the steps are timed take part of the processor
  // time the probe's thread could have had (about half of it on any number of cores): the
  // measure says so, and the reason for the speed too.
  Config config = all_auto(10);
  config.train.device = "cpu";
  config.train.precision = Precision::kFp32;
  const int64_t threads = at::get_num_threads(), blas = blas_threads();
  config.train.threads = 1;
  const CpuReading host = read_cpu();
  if (host.busy_seconds < 0.0) GTEST_SKIP() << "no /proc/stat here";
  const int cores = std::max(1, host.cores);  // those this process may run on
  HostSpeed busy;
  {
    test::Spinners others(2 * cores, 30.0);  // killed when the measure is done
    busy = measure_host_speed(config, sampled_corpus(1000, 37, 37), 1);
  }
  configure_threads(threads);
  if (blas > 0) set_blas_threads(blas);
  EXPECT_EQ(
      busy.warning.rfind("warning: while \"auto\" timed training steps, other processes took ", 0),
      0u)
      << busy.warning;
  EXPECT_NE(busy.warning.find("Start a budgeted run on a quiet host"), std::string::npos);
  EXPECT_NE(busy.how.find("; other processes took "), std::string::npos) << busy.how;
}

/// profile_corpus of the training corpus dir/a.src, dir/a.tgt, validated on its first pair
/// (written to dir/v.src, dir/v.tgt), and monitoring `monitors` of its files (name.src, .tgt).
CorpusProfile profile_files(const std::filesystem::path& dir,
                            const std::vector<std::string>& monitors = {}) {
  const auto files = [&](const std::string& name) {
    CorpusSpec spec;
    spec.kind = CorpusKind::kFiles;
    spec.src = (dir / (name + ".src")).string();
    spec.tgt = (dir / (name + ".tgt")).string();
    return spec;
  };
  for (const char* side : {".src", ".tgt"}) {
    std::string first;
    std::getline(std::ifstream(dir / (std::string("a") + side)), first);
    std::ofstream(dir / (std::string("v") + side)) << first << "\n";
  }
  DataConfig data;
  data.train = {files("a")};
  data.valid = {files("v")};
  std::vector<CorpusSpec> monitored;
  for (const auto& name : monitors) monitored.push_back(files(name));
  return profile_corpus(data, monitored);
}

TEST(AutoRecipe, ProfileReadsPairsCharactersAndAlphabets) {
  const auto dir = temp_dir("auto_profile");
  std::ofstream(dir / "a.src") << "ab\ncab\n";
  std::ofstream(dir / "a.tgt") << "日本\nx，y\n";
  const CorpusProfile corpus = profile_files(dir);
  EXPECT_EQ(corpus.pairs, 2);
  EXPECT_EQ(corpus.src_chars, 5);
  EXPECT_EQ(corpus.src_bytes, 5);
  EXPECT_EQ(corpus.tgt_chars, 5);
  EXPECT_EQ(corpus.tgt_bytes, 11);
  EXPECT_EQ(corpus.src_alphabet, 3);
  EXPECT_EQ(corpus.tgt_alphabet, 5);
  EXPECT_EQ(corpus.joint_alphabet, 8);
  EXPECT_EQ(corpus.tgt_fullwidth, 1);  // "，" (U+FF0C)
  EXPECT_EQ(corpus.valid_pairs, 1);
  EXPECT_EQ(corpus.valid_tgt_bytes, 6);  // "日本"
  EXPECT_EQ(corpus.sampled_bytes, (std::vector<std::pair<int32_t, int32_t>>{{2, 6}, {3, 5}}));
  // A monitor split is decoded at every validation too: its pairs count with the validation
  // set's (here the training corpus itself, monitored).
  const CorpusProfile monitored = profile_files(dir, {"a"});
  EXPECT_EQ(monitored.valid_pairs, 3);
  EXPECT_EQ(monitored.valid_tgt_bytes, 17);
}

TEST(AutoRecipe, TheSampledPairsAreDrawnFromTheWholeCorpus) {
  // 5,000 pairs: a sample of the first 4,096 would hold none of the last 904 (2 bytes a side).
  const auto dir = temp_dir("auto_sample");
  std::ofstream src(dir / "a.src"), tgt(dir / "a.tgt");
  for (int i = 0; i < 5000; ++i)
    src << (i < 4096 ? "a\n" : "bb\n"), tgt << (i < 4096 ? "a\n" : "bb\n");
  src.close(), tgt.close();
  const CorpusProfile corpus = profile_files(dir);
  ASSERT_EQ(corpus.sampled_bytes.size(), CorpusProfile::kSampled);
  int64_t late = 0;
  for (const auto& pair : corpus.sampled_bytes) late += pair.first == 2;
  EXPECT_GT(late, 500);  // 904 x 4,096 / 5,000 = 741 expected
  EXPECT_LT(late, 1000);
}

TEST(AutoTrain, TheLogAndConfigJsonGiveEveryChoiceAndAResumeKeepsThem) {
  const auto dir = temp_dir("auto_train");
  json config = config_to_json(tiny_config(dir / "run"));
  for (const char* key : {"lr", "warmup", "label_smoothing"}) config["train"][key] = "auto";
  config["model"]["dropout"] = "auto";
  config["data"]["batch_tokens"] = "auto";
  config["data"]["vocab_size"] = "auto";
  config["train"]["max_epochs"] = 0;
  config["train"]["max_steps"] = 3;
  std::ofstream(dir / "config.json") << config.dump(2);
  // The explicit vocabulary given over "auto" wins (the tiny corpus cannot fill 2,000 pieces).
  const pid_t trained = spawn_nmt(
      {"train", "--config", (dir / "config.json").string(), "--set", "data.vocab_size=150"},
      dir / "log");
  ASSERT_EQ(wait_exit_code(trained), 0) << read_text(dir / "log");
  const std::string log = read_text(dir / "run" / "train.log");
  for (const char* line :
       {"auto: train.lr = ", "auto: train.warmup = \"10%\": 10% of the budget",
        "auto: model.dropout = ", "auto: data.batch_tokens = 2048: 2,048",
        "auto: data.vocab_size = 150: given by --set over \"auto\"", "auto: host = "}) {
    EXPECT_NE(log.find(line), std::string::npos) << line << "\n" << log;
  }
  const json written = json::parse(read_text(dir / "run" / "config.json"));
  EXPECT_EQ(written["train"]["warmup"], "10%");
  EXPECT_EQ(written["data"]["batch_tokens"], 2048);
  EXPECT_TRUE(written["auto"].contains("model.dropout")) << written.dump(2);
  const double dropout = written["model"]["dropout"];
  const pid_t resumed =
      spawn_nmt({"train", "--resume", (dir / "run").string(), "--set", "train.max_steps=5"},
                dir / "resume_log");
  ASSERT_EQ(wait_exit_code(resumed), 0) << read_text(dir / "resume_log");
  const json after = json::parse(read_text(dir / "run" / "config.json"));
  EXPECT_EQ(after["model"]["dropout"], dropout);
  EXPECT_EQ(after["auto"], written["auto"]);
  EXPECT_EQ(after["train"]["max_steps"], 5);
}

}  // namespace
}  // namespace nmt
