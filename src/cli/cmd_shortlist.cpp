// nmt shortlist: a checkpoint's tokenizer and parallel text -> a lexical shortlist file
// (decode/shortlist.h) for --shortlist / decode.shortlist and CTranslate2's vmap.txt.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"
#include "data/corpus.h"
#include "decode/shortlist.h"
#include "train/checkpoint.h"

namespace nmt::cli {
namespace {

int run_shortlist(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Learn a lexical shortlist from parallel text: for each source piece the target pieces "
      "most likely to translate it (IBM Model 1, EM), plus the most frequent target pieces. "
      "Decoding with --shortlist FILE (decode.shortlist) then scores only those of each sentence "
      "instead of the whole vocabulary; nmt export --shortlist gives it to CTranslate2 as "
      "vmap.txt. Learn it from the text the model was trained on (a student: the teacher's "
      "translations).\n\n"
      "  nmt shortlist --checkpoint checkpoints/student --split train --output shortlist.txt\n"
      "  nmt shortlist --checkpoint run --src train.en --tgt train.de --output "
      "run/shortlist.txt\n");
  // clang-format off
  options.add_options()
      ("checkpoint", "the model whose tokenizer the shortlist is for (file or run directory)",
       cxxopts::value<std::string>(), "PATH")
      ("output", "the shortlist file to write", cxxopts::value<std::string>(), "FILE")
      ("per-source", "target pieces kept per source piece",
       cxxopts::value<int64_t>()->default_value("50"), "K")
      ("frequent", "most frequent target pieces, always scored",
       cxxopts::value<int64_t>()->default_value("100"), "N")
      ("iterations", "EM iterations", cxxopts::value<int64_t>()->default_value("5"), "N");
  options.add_options("pairs")
      ("split", "split(s) of the checkpoint config's data.dir, comma-separated",
       cxxopts::value<std::string>(), "NAME")
      ("corpus", "pairs in any data.train form: a split, {\"src\": F, \"tgt\": F}, "
       "{\"tsv\": F, \"src_column\": 0, \"tgt_column\": 1}, or a JSON list of them",
       cxxopts::value<std::string>(), "SPEC")
      ("src", "source file (with --tgt)", cxxopts::value<std::string>(), "FILE")
      ("tgt", "target file, one translation per source line (with --src)",
       cxxopts::value<std::string>(), "FILE");
  // clang-format on
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  if (!args.count("checkpoint")) throw Error("--checkpoint PATH is required");
  if (!args.count("output")) throw Error("--output FILE is required");
  ShortlistOptions shortlist_options;
  shortlist_options.per_source = args["per-source"].as<int64_t>();
  shortlist_options.frequent = args["frequent"].as<int64_t>();
  shortlist_options.iterations = args["iterations"].as<int64_t>();
  if (shortlist_options.per_source < 1 || shortlist_options.per_source > 100000) {
    throw Error("--per-source must be in 1..100000, got " +
                std::to_string(shortlist_options.per_source));
  }
  if (shortlist_options.frequent < 0 || shortlist_options.frequent > 100000) {
    throw Error("--frequent must be in 0..100000, got " +
                std::to_string(shortlist_options.frequent));
  }
  if (shortlist_options.iterations < 1 || shortlist_options.iterations > 100) {
    throw Error("--iterations must be in 1..100, got " +
                std::to_string(shortlist_options.iterations));
  }
  const auto sets = test_sets(args, "tgt");
  const auto start = std::chrono::steady_clock::now();
  const auto checkpoint = resolve_checkpoint(args["checkpoint"].as<std::string>());
  const auto loaded = load_checkpoint(checkpoint, at::Device(at::kCPU));
  const Tokenizer& tokenizer = loaded.tokenizer;
  std::vector<std::vector<int64_t>> sources, targets;
  for (const auto& set : sets) {
    const auto text = read_corpus(loaded.config.data, set.corpus);
    for (size_t i = 0; i < text.size(); ++i) {
      sources.push_back(tokenizer.encode_src(text.src[i]));
      targets.push_back(tokenizer.encode_tgt(text.tgt[i]));
    }
  }
  if (sources.empty()) throw Error("no sentence pairs to learn a shortlist from");
  const auto shortlist = Shortlist::learn(sources, targets, tokenizer.src_vocab_size(),
                                          tokenizer.tgt_vocab_size(), shortlist_options);
  const std::string output = args["output"].as<std::string>();
  shortlist.save(output, tokenizer);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "shortlist: %zu pairs, %s; wrote %s in %.1f s\n", sources.size(),
               shortlist.describe().c_str(), output.c_str(), seconds);
  return 0;
}

const bool registered_shortlist = register_command(
    {"shortlist", "learn a lexical shortlist for faster decoding", run_shortlist, 57});

}  // namespace
}  // namespace nmt::cli
