// nmt prepare: trains (or loads) the run's SentencePiece tokenizer and prints corpus statistics,
// so vocabulary, filtering and batching choices can be checked before a long training run.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/batching.h"
#include "data/dataset.h"
#include "data/mixing.h"

namespace nmt::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One line on the batches of `split`: count, mean rows, padding.
void print_batches(const char* what, const std::vector<Example>& examples,
                   const std::vector<std::vector<size_t>>& batches, int64_t batch_tokens) {
  const double rows =
      batches.empty() ? 0.0
                      : static_cast<double>(examples.size()) / static_cast<double>(batches.size());
  std::printf(
      "  %s batches (data.batch_tokens=%lld): %zu batches, %.1f pairs/batch, "
      "padding %.2f%%\n",
      what, static_cast<long long>(batch_tokens), batches.size(), rows,
      100.0 * padding_ratio(examples, batches));
}

int run_prepare(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Trains the tokenizer into the run directory (or loads it from there) "
                           "and prints corpus statistics.");
  add_config_options(options);
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  const Config config = config_from_args(args);
  const DataConfig& data = config.data;
  const std::filesystem::path run_dir = config.train.resolved_run_dir();

  auto start = Clock::now();
  bool trained = false;
  const Tokenizer tokenizer = prepare_tokenizer(data, run_dir, &trained);
  const double tokenizer_s = seconds_since(start);
  std::printf("tokenizer: %s %s in %s: vocab %lld (source), %lld (target) [%.2f s]\n",
              trained ? (std::string("trained ") + choice_name(data.vocab_type)).c_str() : "loaded",
              tokenizer.joint() ? "joint model" : "separate models", run_dir.string().c_str(),
              static_cast<long long>(tokenizer.src_vocab_size()),
              static_cast<long long>(tokenizer.tgt_vocab_size()), tokenizer_s);

  start = Clock::now();
  const EncodedSplit train = load_corpora(data, data.train, tokenizer);
  const double train_s = seconds_since(start);
  const std::string name = data.train.size() == 1 ? data.train[0].name() : "train";
  std::cout << describe_parts(name + " (" + data.src_lang + "->" + data.tgt_lang + ")", train);
  start = Clock::now();
  std::vector<Example> epoch = train.examples;  // epoch 1's pairs: the weighted mix, if any
  if (mixes(train.parts)) {
    epoch.clear();
    for (const size_t i : epoch_mix(train.parts, data.seed, 0)) epoch.push_back(train.examples[i]);
    std::printf("  epoch 1 mix (corpus weights): %zu pairs\n", epoch.size());
  }
  const auto batches = make_batches(epoch, batching_options(data), 1);
  const double batch_s = seconds_since(start);
  print_batches("epoch 1", epoch, batches, data.batch_tokens);

  start = Clock::now();
  const EncodedSplit valid = load_corpus(data, data.valid, tokenizer);
  const double valid_s = seconds_since(start);
  std::cout << describe(data.valid.name(), valid.stats);
  print_batches("sorted", valid.examples, make_sorted_batches(valid.examples, data.batch_tokens),
                data.batch_tokens);

  std::printf("timings: tokenizer %.2f s, read+encode %s %.2f s, %s %.2f s, batching %.3f s\n",
              tokenizer_s, name.c_str(), train_s, data.valid.name().c_str(), valid_s, batch_s);
  return 0;
}

}  // namespace

const bool registered_prepare = register_command(
    {"prepare", "train the tokenizer and print corpus statistics", run_prepare, 10});

}  // namespace nmt::cli
