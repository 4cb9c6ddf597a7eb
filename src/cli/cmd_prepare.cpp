// nmt prepare: trains (or loads) the run's SentencePiece tokenizer, encodes the training corpus
// into the run directory (or maps it from there) and prints corpus statistics, so vocabulary,
// filtering and batching choices can be checked before a long training run.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/languages.h"
#include "data/batching.h"
#include "data/dataset.h"
#include "data/encoded_corpus.h"
#include "data/mixing.h"
#include "train/auto_recipe.h"

namespace nmt::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One line on the batches of `split`: count, mean rows, padding.
void print_batches(const char* what, const PairsView& pairs,
                   const std::vector<std::vector<size_t>>& batches, int64_t batch_tokens) {
  const double rows = batches.empty()
                          ? 0.0
                          : static_cast<double>(pairs.size()) / static_cast<double>(batches.size());
  std::printf(
      "  %s batches (data.batch_tokens=%lld): %zu batches, %.1f pairs/batch, "
      "padding %.2f%%\n",
      what, static_cast<long long>(batch_tokens), batches.size(), rows,
      100.0 * padding_ratio(pairs, batches));
}

/// How the tokenizer was come by, and (trained) on how many lines in how long.
void print_tokenizer(const Tokenizer& tokenizer, const DataConfig& data,
                     const std::filesystem::path& run_dir, const TokenizerReport& report,
                     double seconds) {
  std::printf(
      "tokenizer: %s %s in %s: vocab %lld (source), %lld (target) [%.2f s]\n",
      report.trained ? (std::string("trained ") + choice_name(data.vocab_type)).c_str() : "loaded",
      tokenizer.joint() ? "joint model" : "separate models", run_dir.string().c_str(),
      static_cast<long long>(tokenizer.src_vocab_size()),
      static_cast<long long>(tokenizer.tgt_vocab_size()), seconds);
  if (const auto casing = tokenizer.word_casing()) {
    std::printf("  word casing of the training sources (%s): %s\n",
                (run_dir / kWordCasingFile).string().c_str(), casing->summary().c_str());
  }
  if (!report.trained) return;
  std::printf(
      "  trained on %zu of %zu lines (%s; %zu sentences and %zu characters per model at most; "
      "bounds data.spm_sentences=%lld, data.spm_characters=%lld): reading and sampling %.2f s, "
      "SentencePiece training %.2f s on %lld thread(s)\n",
      report.sampled, report.lines, report.sampled < report.lines ? "a sample" : "every line",
      report.sentences, report.characters, static_cast<long long>(data.spm_sentences),
      static_cast<long long>(data.spm_characters), report.read_seconds, report.train_seconds,
      static_cast<long long>(report.threads));
}

int run_prepare(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Trains the tokenizer into the run directory (or loads it from there), "
                           "encodes the training corpus into it and prints corpus statistics.");
  add_config_options(options);
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  Config config = config_from_args(args);
  resolve_auto(config);  // the vocabulary "auto" may choose is needed now
  for (const auto& choice : config.auto_choices) {
    std::cout << "auto: " << choice.key << " = " << choice.value << ": " << choice.why << "\n";
  }
  for (const auto& warning : config.auto_warnings) std::cerr << warning << "\n";
  const DataConfig& data = config.data;
  const std::filesystem::path run_dir = config.train.resolved_run_dir();

  auto start = Clock::now();
  TokenizerReport tokenizer_report;
  const Tokenizer tokenizer = prepare_tokenizer(data, run_dir, nullptr, &tokenizer_report);
  const double tokenizer_s = seconds_since(start);
  print_tokenizer(tokenizer, data, run_dir, tokenizer_report, tokenizer_s);
  const std::string warning = normalization_warning(data, tokenizer_report);
  if (!warning.empty()) std::cerr << warning << "\n";

  EncodedCorpusReport corpus_report;
  TrainCorpus train = prepare_encoded_corpus(data, tokenizer, run_dir, &corpus_report);
  std::printf("encoded training corpus: %s %s (%.1f MB) [%.2f s]%s%s\n",
              corpus_report.built ? "wrote" : "mapped", corpus_report.file.string().c_str(),
              static_cast<double>(corpus_report.bytes) / 1e6, corpus_report.seconds,
              corpus_report.built ? " because " : "", corpus_report.reason.c_str());
  const std::string name = data.train.size() == 1 ? data.train[0].name() : "train";
  std::string directions;  // "en->de", or "en->de, en->fr" for several pairs
  for (const auto& pair : trained_pairs(data)) {
    directions += (directions.empty() ? "" : ", ") + pair.src + "->" + pair.tgt;
  }
  std::cout << describe_parts(name + " (" + directions + ")", train.parts, train.stats);
  const std::string shares = apply_sampling_temperature(data, train.parts);
  if (!shares.empty()) std::cout << shares << "\n";
  start = Clock::now();
  std::vector<size_t> mix;  // epoch 1's rows: the weighted mix, if any
  if (mixes(train.parts)) {
    mix = epoch_mix(train.parts, data.seed, 0);
    std::printf("  epoch 1 mix (corpus weights): %zu pairs\n", mix.size());
  }
  const PairsView epoch(train.pairs, mixes(train.parts) ? &mix : nullptr);
  const auto batches = make_batches(epoch, batching_options(data), 1);
  const double batch_s = seconds_since(start);
  print_batches("epoch 1", epoch, batches, data.batch_tokens);

  start = Clock::now();
  std::string valid_names;
  for (const auto& corpus : corpora_per_pair(data, data.valid)) {
    const EncodedSplit valid = load_corpus(data, corpus, tokenizer);
    const std::string valid_name =
        corpus.name() + (multilingual(data) ? "." + corpus_pair(data, corpus).name() : "");
    valid_names += (valid_names.empty() ? "" : ", ") + valid_name;
    std::cout << describe(valid_name, valid.stats);
    const PairStore valid_pairs = PairStore::from_examples(valid.examples);
    print_batches("sorted", PairsView(valid_pairs),
                  make_sorted_batches(PairsView(valid_pairs), data.batch_tokens),
                  data.batch_tokens);
  }
  const double valid_s = seconds_since(start);

  std::printf(
      "timings: tokenizer %.2f s (reading and sampling %.2f s, SentencePiece training %.2f s), "
      "training corpus %.2f s (%s), %s %.2f s, batching %.3f s\n",
      tokenizer_s, tokenizer_report.read_seconds, tokenizer_report.train_seconds,
      corpus_report.seconds,
      corpus_report.built ? "read, encoded and written" : "checked and mapped", valid_names.c_str(),
      valid_s, batch_s);
  return 0;
}

}  // namespace

const bool registered_prepare = register_command(
    {"prepare", "train the tokenizer, encode the training corpus, print statistics", run_prepare,
     10});

}  // namespace nmt::cli
