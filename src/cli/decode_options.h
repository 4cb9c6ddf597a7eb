#pragma once

// Options shared by the subcommands that decode with a checkpoint (translate, evaluate, bench):
// the checkpoint, device and threads, and the decoding settings that override the checkpoint
// config's `decode` section.

#include <cxxopts.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/common.h"
#include "core/config.h"
#include "core/languages.h"
#include "core/precision.h"
#include "decode/translator.h"
#include "text/document.h"
#include "train/checkpoint.h"

namespace nmt::cli {

/// Adds --checkpoint, --device, --threads, --precision and --set (every command that loads a
/// model).
void add_model_options(cxxopts::Options& options);

/// add_model_options, one flag per decode key as DecodeConfig::fields declares it (its spelling,
/// value name and help; an enum's help lists its choices), and --tgt-lang.
void add_decode_options(cxxopts::Options& options);

/// Adds --workers to `group` (translate, evaluate, serve).
void add_workers_option(cxxopts::Options& options, const std::string& group);

/// --workers for `device`: 0 is one single-threaded worker per intra-op thread on a CPU (as
/// Marian's --cpu-threads) and 1 on CUDA; outside 0..64 an nmt::Error. With more than one,
/// OpenBLAS gets one thread (its pool is one for the process).
int64_t decoding_workers(const cxxopts::ParseResult& args, const at::Device& device);

/// `base` (a checkpoint's decode section) with the decoding options given on the command line;
/// completed as DecodeConfig::complete says. Validated.
DecodeConfig decode_config_from_args(DecodeConfig base, const cxxopts::ParseResult& args);

/// The search in words, for reports: the strategy's own (Searcher::describe: "beam 5, alpha
/// 2.00", "32 samples, epsilon 0.02, seed 1"), then the options that apply to all of them (int8,
/// shortlist, repetition guards, ", MBR chrf over N").
std::string describe_search(const DecodeConfig& decode);

/// --checkpoint's comma-separated list (one entry: one checkpoint); an empty entry is an
/// nmt::Error.
std::vector<std::string> split_checkpoint_list(const std::string& value);

/// Throws an nmt::Error naming both files unless two ensemble members translate in the same
/// direction (data.src_lang, data.tgt_lang) with byte-identical tokenizers.
void check_same_tokenizer(const LoadedModel& first, const std::filesystem::path& first_path,
                          const LoadedModel& other, const std::filesystem::path& other_path);

/// A checkpoint (or an ensemble of them) loaded as the options say, with a Translator over it.
struct DecodeSession {
  std::filesystem::path checkpoint;         ///< the resolved (first) checkpoint file
  LoadedModel loaded;                       ///< its config, model and tokenizer
  at::Device device;                        ///< where the model runs
  std::unique_ptr<AutocastGuard> autocast;  ///< bf16 autocast while the session lives
  std::unique_ptr<Translator> translator;
  std::string weights = "float weights";  ///< or how they were laid out for the CPU (reports)
  std::vector<std::filesystem::path> checkpoints;  ///< every member's file, in order
  Ensemble models{Seq2Seq{nullptr}};               ///< the model, or the ensemble
  /// The pair it translates (--tgt-lang, or the model's only target); empty for a model of
  /// several targets when --tgt-lang was not given.
  LanguagePair pair;
};

/// The session's pair; an nmt::Error listing the model's pairs when it has several targets and
/// --tgt-lang chose none.
const LanguagePair& require_pair(const DecodeSession& session);

/// The session's pair (require_pair) with each corpus of `sets` that names no languages of its
/// own set to read in it (evaluate, score).
LanguagePair read_sets_in_pair(const DecodeSession& session, std::vector<TestSet>& sets);

/// The session's checkpoint file(s), comma-separated as --checkpoint takes them (for reports).
std::string checkpoint_names(const DecodeSession& session);

/// Adds --split, --format and --casing (translate, serve: their defaults for requests).
void add_text_options(cxxopts::Options& options);

/// The text options of `session`'s model: its languages, its segment limit (data.max_len within
/// the model's positions), its training sources' word casing; the defaults otherwise.
TextOptions session_text_options(const DecodeSession& session);

/// session_text_options with --split, --format and --casing; an unknown value is an
/// nmt::Error naming the valid ones.
TextOptions text_options_from_args(const cxxopts::ParseResult& args, const DecodeSession& session);

/// Resolves and loads --checkpoint (a missing one is an nmt::Error), applies --set
/// (section.key=value, e.g. data.dir or decode.beam) to its config, sets threads and precision,
/// and decodes with its decode section under the decoding flags (decode_config_from_args).
/// A list A,B,... loads an ensemble: the first member's config and tokenizer serve it, and every
/// member must have the same tokenizer (check_same_tokenizer) and vocabulary shapes (Ensemble).
DecodeSession open_decode_session(const cxxopts::ParseResult& args);

}  // namespace nmt::cli
