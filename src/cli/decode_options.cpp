#include "cli/decode_options.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/device.h"
#include "core/error.h"
#include "core/memory.h"
#include "decode/searcher.h"
#include "decode/shortlist.h"
#include "model/quantize.h"

namespace nmt::cli {

namespace {

/// The value of a flag that is on alone (--flag) and takes =true or =false; else an nmt::Error
/// naming the flag (cxxopts' own bool parsing would not name it).
bool true_or_false(const std::string& flag, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  throw Error(flag + " = '" + value + "' is not valid: use " + flag + " (true), " + flag +
              "=true or " + flag + "=false");
}

}  // namespace

std::vector<std::string> split_checkpoint_list(const std::string& value) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    names.push_back(value.substr(start, comma == std::string::npos ? comma : comma - start));
    if (names.back().empty()) {
      throw Error("--checkpoint '" + value + "' has an empty entry: give PATH or PATH,PATH,...");
    }
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

void check_same_tokenizer(const LoadedModel& first, const std::filesystem::path& first_path,
                          const LoadedModel& other, const std::filesystem::path& other_path) {
  const auto describe = [](const LoadedModel& loaded) {
    return std::to_string(loaded.tokenizer.src_vocab_size()) + "/" +
           std::to_string(loaded.tokenizer.tgt_vocab_size()) + " pieces (" +
           (loaded.tokenizer.joint() ? "joint" : "separate") + ")";
  };
  const auto direction = [](const LoadedModel& loaded) {
    return loaded.config.data.src_lang + "->" + loaded.config.data.tgt_lang;
  };
  if (direction(first) != direction(other)) {
    throw Error("ensemble members " + first_path.string() + " and " + other_path.string() +
                " translate in different directions (" + direction(first) + " and " +
                direction(other) + ")");
  }
  if (first.tokenizer.serialized() != other.tokenizer.serialized()) {
    throw Error("ensemble members " + first_path.string() + " and " + other_path.string() +
                " have different tokenizers (" + describe(first) + " and " + describe(other) +
                "): an ensemble's members must be trained with the same SentencePiece model(s) "
                "(data.spm_model)");
  }
}

void add_model_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("model")
      ("checkpoint", "checkpoint file, or a run directory (its averaged.pt, else best.pt, else "
       "last.pt); A,B,... decodes with an ensemble (log-probabilities averaged per step)",
       cxxopts::value<std::string>(), "PATH")
      ("device", "auto | cpu | cuda | cuda:N", cxxopts::value<std::string>()->default_value("auto"))
      ("threads", "CPU threads (0: one per core; default: the checkpoint's train.threads)",
       cxxopts::value<int64_t>(), "N")
      ("precision", "fp32 | bf16 (autocast matmuls) | auto (bf16 on a CPU with AVX512-BF16, fp32 "
       "on other CPUs and on CUDA)",
       cxxopts::value<std::string>()->default_value("fp32"))
      ("set", "override a key of the checkpoint's config: section.key=value (data.*, decode.*; "
       "repeatable; decoding flags win over it)", cxxopts::value<std::vector<std::string>>());
  // clang-format on
}

void add_decode_options(cxxopts::Options& options) {
  add_model_options(options);
  auto add = options.add_options("decoding (defaults: the checkpoint's decode section)");
  // One flag per decode key, from its declaration (DecodeConfig::fields).
  DecodeConfig().fields([&](const char* key, auto& field, const Option& option) {
    using T = std::decay_t<decltype(field)>;
    const auto flag = option.command_flag(key);
    std::string help = option.help;
    if constexpr (std::is_enum_v<T>) help += ": " + choice_list<T>();
    if (*option.cli_flag != '\0') help += " (decode." + std::string(key) + ")";
    if constexpr (std::is_same_v<T, bool>) {
      add(flag, help, cxxopts::value<std::string>()->implicit_value("true"), option.value_name);
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
      add(flag, help, cxxopts::value<T>(), option.value_name);
    } else {
      add(flag, help, cxxopts::value<std::string>(), option.value_name);
    }
  });
  add("tgt-lang",
      "target language of a model trained on several pairs (nmt inspect lists them); a "
      "bilingual model accepts its own target only",
      cxxopts::value<std::string>(), "LANG");
}

void add_workers_option(cxxopts::Options& options, const std::string& group) {
  options.add_options(group)(
      "workers",
      "batches decoded at once, each on its own thread, sharing --threads among them (0: one "
      "single-threaded worker per thread on a CPU, 1 on CUDA)",
      cxxopts::value<int64_t>()->default_value("0"), "N");
}

int64_t decoding_workers(const cxxopts::ParseResult& args, const at::Device& device) {
  int64_t workers = args["workers"].as<int64_t>();
  if (workers < 0 || workers > 64) {
    throw Error("--workers must be in 0..64 (0: automatic), got " + std::to_string(workers));
  }
  // A beam step over a few sentences is many small ops that two threads barely speed up, so
  // independent batches use the cores better (docs/serve.md, Benchmark).
  if (workers == 0) workers = device.is_cuda() ? 1 : std::min<int64_t>(64, at::get_num_threads());
  if (workers > 1) set_blas_threads(1);
  return workers;
}

DecodeConfig decode_config_from_args(DecodeConfig base, const cxxopts::ParseResult& args) {
  base.fields([&](const char* key, auto& field, const Option& option) {
    using T = std::decay_t<decltype(field)>;
    const auto flag = option.command_flag(key);
    if (!args.count(flag)) return;
    const auto name = "--" + flag;
    if constexpr (std::is_same_v<T, bool>) {
      field = true_or_false(name, args[flag].as<std::string>());
    } else if constexpr (std::is_enum_v<T>) {
      field = require_choice<T>(name, args[flag].as<std::string>());
    } else if constexpr (std::is_same_v<T, std::string>) {
      field = args[flag].as<std::string>();
      if (*option.empty_word != '\0' && field == option.empty_word) field.clear();
    } else {
      field = args[flag].as<T>();
    }
  });
  base.complete(args.count("search") > 0, args.count("beam") > 0);
  base.validate();
  return base;
}

std::string describe_search(const DecodeConfig& decode) {
  std::string description = make_searcher(decode)->describe();
  char text[64];
  if (decode.quantization == Quantization::kInt8) description += ", int8 weights";
  if (!decode.shortlist.empty()) description += ", shortlist " + decode.shortlist;
  if (decode.no_repeat_ngram_size > 0) {
    description += ", no repeated " + std::to_string(decode.no_repeat_ngram_size) + "-grams";
  }
  if (decode.repetition_penalty != 1.0) {
    std::snprintf(text, sizeof text, ", repetition penalty %g", decode.repetition_penalty);
    description += text;
  }
  if (decode.mbr > 0) {
    description += ", MBR " + std::string(choice_name(decode.mbr_metric)) + " over " +
                   std::to_string(decode.mbr);
  }
  return description;
}

void add_text_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("text")
      ("split", "sentences: a line may hold a paragraph, split into sentences (ICU, for the "
       "source language, and where a word that begins sentences in the model's training data "
       "follows an unpunctuated one) and joined back with its own whitespace | none: a line is one "
       "segment; either way a segment longer than the model reads is split at clause "
       "punctuation, then between words, never cut",
       cxxopts::value<std::string>()->default_value("sentences"), "MODE")
      ("format", "text | html: the input is an HTML document (libxml2's parser); inline tags "
       "come back around the translation of their words (by the model's alignment), block "
       "elements are segments, attributes, comments, script, style, pre and code pass through",
       cxxopts::value<std::string>()->default_value("text"), "F")
      ("casing", "auto: an ALL CAPS or Title Case sentence is translated in sentence case, each "
       "word as the model's training data writes it inside a sentence (ALL CAPS upper-cased "
       "again) | none: as written",
       cxxopts::value<std::string>()->default_value("auto"), "MODE");
  // clang-format on
}

TextOptions session_text_options(const DecodeSession& session) {
  TextOptions text;
  const DataConfig& data = session.loaded.config.data;
  text.src_lang = session.pair.src.empty() ? data.src_lang : session.pair.src;
  text.tgt_lang = session.pair.tgt.empty() ? data.tgt_lang : session.pair.tgt;
  text.max_pieces = segment_limit(session.models, data.max_len, data.lang_tag == LangTag::kSource);
  text.words = session.loaded.tokenizer.word_casing();
  return text;
}

TextOptions text_options_from_args(const cxxopts::ParseResult& args, const DecodeSession& session) {
  TextOptions text = session_text_options(session);
  text.split = require_choice<SplitMode>("--split", args["split"].as<std::string>());
  text.format = require_choice<TextFormat>("--format", args["format"].as<std::string>());
  text.casing = require_choice<CasingMode>("--casing", args["casing"].as<std::string>());
  return text;
}

std::string checkpoint_names(const DecodeSession& session) {
  std::string names;
  for (const auto& path : session.checkpoints) names += (names.empty() ? "" : ",") + path.string();
  return names;
}

DecodeSession open_decode_session(const cxxopts::ParseResult& args) {
  if (!args.count("checkpoint")) throw Error("--checkpoint PATH is required");
  const auto device = resolve_device(args["device"].as<std::string>());
  std::vector<std::filesystem::path> paths;
  for (const auto& name : split_checkpoint_list(args["checkpoint"].as<std::string>())) {
    paths.push_back(resolve_checkpoint(name));
  }
  DecodeSession session{paths.front(), load_checkpoint(paths.front(), device),
                        device,        nullptr,
                        nullptr,       "float weights",
                        paths,         Ensemble(Seq2Seq{nullptr}),
                        LanguagePair{}};
  std::vector<Seq2Seq> members = {session.loaded.model};
  for (size_t i = 1; i < paths.size(); ++i) {
    auto member = load_checkpoint(paths[i], device);
    check_same_tokenizer(session.loaded, paths.front(), member, paths[i]);
    members.push_back(member.model);
  }
  apply_overrides(session.loaded.config, overrides_from_args(args));
  configure_threads(args.count("threads") ? args["threads"].as<int64_t>()
                                          : session.loaded.config.train.threads);
  const auto precision =
      require_choice<Precision>("--precision", args["precision"].as<std::string>());
  session.autocast = std::make_unique<AutocastGuard>(precision, device);
  const auto decode = decode_config_from_args(session.loaded.config.decode, args);
  if (decode.quantization == Quantization::kInt8) {
    for (auto& member : members) session.weights = quantize_int8(member);
  } else if (device.is_cpu() && !InheritedAutocast::State::current().cpu && packing_available()) {
    // float32 on the CPU: the weights packed once, rather than by OpenBLAS at every product.
    for (auto& member : members) session.weights = pack_float32(member);
  }
  // The twins hold their own copies: the float ones would only take memory (22 MB by default),
  // and neither would what loading left free, unless given back (core/memory.h).
  for (auto& member : members) release_twinned_weights(member);
  return_free_memory();
  session.models = Ensemble(std::move(members));
  if (!decode.shortlist.empty()) {
    session.models.set_shortlist(std::make_shared<const Shortlist>(
        Shortlist::load(decode.shortlist, session.loaded.tokenizer)));
  }
  session.translator =
      std::make_unique<Translator>(session.models, session.loaded.tokenizer, decode, device);
  // The target language: --tgt-lang, or the model's only one; a model of several targets
  // without --tgt-lang leaves it to require_pair (translate, evaluate) or each request (serve).
  const DataConfig& data = session.loaded.config.data;
  const std::string wanted = args.count("tgt-lang") ? args["tgt-lang"].as<std::string>() : "";
  if (!wanted.empty() || target_languages(data).size() == 1) {
    session.pair = resolve_pair(data, wanted, "--tgt-lang");
  }
  session.translator->set_language(LanguageTags(data, session.loaded.tokenizer), session.pair.tgt);
  return session;
}

LanguagePair read_sets_in_pair(const DecodeSession& session, std::vector<TestSet>& sets) {
  const LanguagePair pair = require_pair(session);
  for (auto& set : sets) {
    if (set.corpus.src_lang.empty()) set.corpus.src_lang = pair.src;
    if (set.corpus.tgt_lang.empty()) set.corpus.tgt_lang = pair.tgt;
  }
  return pair;
}

const LanguagePair& require_pair(const DecodeSession& session) {
  if (session.pair.tgt.empty()) resolve_pair(session.loaded.config.data, "", "--tgt-lang");
  return session.pair;
}

}  // namespace nmt::cli
