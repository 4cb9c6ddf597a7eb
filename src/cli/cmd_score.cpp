// nmt score: argv -> (checkpoint, parallel text) -> teacher_forced_scores -> one line per pair.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "core/choice.h"
#include "core/device.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "data/corpus.h"
#include "decode/evaluation.h"

namespace nmt::cli {
namespace {

/// What each output line holds: all three fields, or one number (for piping into sort, paste).
enum class ScoreField { kAll, kSum, kMean };

}  // namespace
}  // namespace nmt::cli

namespace nmt {
template <>
struct ChoiceNames<cli::ScoreField> {  // --only's values (all three fields: no --only)
  static constexpr std::pair<cli::ScoreField, const char*> names[] = {
      {cli::ScoreField::kSum, "sum"}, {cli::ScoreField::kMean, "mean"}};
};
}  // namespace nmt

namespace nmt::cli {
namespace {

ScoreField score_field(const cxxopts::ParseResult& args) {
  if (!args.count("only")) return ScoreField::kAll;
  return require_choice<ScoreField>("--only", args["only"].as<std::string>());
}

void write_score(std::FILE* out, const SentenceScore& score, ScoreField field) {
  switch (field) {
    case ScoreField::kSum:
      std::fprintf(out, "%.6f\n", score.log_prob);
      break;
    case ScoreField::kMean:
      std::fprintf(out, "%.6f\n", score.mean());
      break;
    case ScoreField::kAll:
      std::fprintf(out, "%.6f\t%.6f\t%lld\n", score.log_prob, score.mean(),
                   static_cast<long long>(score.tokens));
      break;
  }
}

int run_score(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Score translations with a model (forced decoding): for every source/target pair the "
      "log-probability of the target given the source, in nats, eos included. One line per pair, "
      "in input order: the sum, the mean per token and the token count, tab-separated (--only: "
      "one of the numbers). For filtering a corpus, reranking, quality checks.\n\n"
      "  nmt score --checkpoint checkpoints/multi30k_en_de --src test.en --tgt test.de\n"
      "  nmt score --checkpoint run/averaged.pt --split val --only mean > val.scores\n");
  add_model_options(options);
  // clang-format off
  options.add_options("pairs")
      ("split", "split(s) of the checkpoint config's data.dir, comma-separated",
       cxxopts::value<std::string>(), "NAME")
      ("corpus", "pairs in any data.valid form: a split, {\"src\": F, \"tgt\": F}, "
       "{\"tsv\": F, \"src_column\": 0, \"tgt_column\": 1}, or a JSON list of them",
       cxxopts::value<std::string>(), "SPEC")
      ("src", "source file (with --tgt)", cxxopts::value<std::string>(), "FILE")
      ("tgt", "target file, one translation per source line (with --src)",
       cxxopts::value<std::string>(), "FILE")
      ("tgt-lang", "target language of a model trained on several pairs (its tag is added as "
       "in training; the split is read in that pair)", cxxopts::value<std::string>(), "LANG")
      ("only", "print one number per pair: sum | mean", cxxopts::value<std::string>(), "FIELD")
      ("output", "write the scores here instead of stdout", cxxopts::value<std::string>(), "FILE")
      ("batch-tokens", "token budget per batch (default: the checkpoint's decode.batch_tokens)",
       cxxopts::value<int64_t>(), "N");
  // clang-format on
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  const ScoreField field = score_field(args);
  std::vector<TestSet> sets = test_sets(args, "tgt");
  auto session = open_decode_session(args);
  const Config& config = session.loaded.config;
  const Tokenizer& tokenizer = session.loaded.tokenizer;
  const LanguagePair pair = read_sets_in_pair(session, sets);
  std::vector<ParallelText> texts;
  for (const auto& set : sets) texts.push_back(read_corpus(config.data, set.corpus));
  std::FILE* out = stdout;
  const std::string where = args.count("output") ? args["output"].as<std::string>() : "stdout";
  // Closed if anything below throws; closed and checked by hand at the end.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (args.count("output")) {
    file.reset(std::fopen(where.c_str(), "w"));
    if (!file) throw Error("cannot write scores to " + where);
    out = file.get();
  }
  install_interrupt_handlers();  // Ctrl-C / SIGTERM: the scores so far are written, then stop
  const auto start = std::chrono::steady_clock::now();
  int64_t pairs = 0;
  int64_t tokens = 0;
  double log_prob = 0.0;
  for (size_t s = 0; s < sets.size(); ++s) {
    const auto examples = encode_pairs(tokenizer, texts[s].src, texts[s].tgt,
                                       session.translator->language_tags(), pair.tgt);
    std::vector<SentenceScore> scores;
    try {
      scores =
          teacher_forced_scores(session.models, examples, session.translator->config().batch_tokens,
                                session.device, &interrupted);
    } catch (const Error& e) {
      throw Error(sets[s].name + ": " + e.what());
    }
    for (const auto& score : scores) {
      if (score.tokens == 0) break;  // interrupted: the pairs before it are written, in order
      write_score(out, score, field);
      ++pairs;
      tokens += score.tokens;
      log_prob += score.log_prob;
    }
    if (interrupted()) break;
  }
  // ferror: a write that failed earlier, when the buffer was flushed on its own.
  const bool failed = std::ferror(out) != 0 || std::fflush(out) != 0;
  if (failed || (file && std::fclose(file.release()) != 0)) {
    throw Error("cannot write scores to " + where);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "scored %lld pairs (%lld target tokens, mean log-probability %.4f per token) in "
               "%.2f s: %.0f pairs/s, %s\n",
               static_cast<long long>(pairs), static_cast<long long>(tokens),
               tokens > 0 ? log_prob / double(tokens) : 0.0, seconds,
               seconds > 0 ? double(pairs) / seconds : 0.0,
               describe_device(session.device).c_str());
  if (interrupted()) {
    std::fprintf(stderr, "interrupted: the first %lld pairs were scored\n",
                 static_cast<long long>(pairs));
    return 130;
  }
  return 0;
}

const bool registered_score = register_command(
    {"score", "log-probability of given translations (forced decoding)", run_score, 55});

}  // namespace
}  // namespace nmt::cli
