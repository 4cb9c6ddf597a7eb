#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/bleu_tokenizer.h"
#include "core/choice.h"
#include "core/corpus_spec.h"
#include "core/option.h"

namespace nmt {

// Typed configuration. Each component receives its own section; every field is defaulted here
// and listed once in its section's `fields()`, which drives JSON reading/writing, `--set`
// overrides and the strict unknown-key check (nanoGPT-style configurator, typed).

// Option values: enums parsed once where the config is read (core/choice.h), spelled in JSON as
// the names listed after each.

enum class Activation { kRelu, kGelu };                             ///< relu | gelu
enum class Norm { kPost, kPre };                                    ///< post | pre
enum class Positions { kLearned, kSinusoidal };                     ///< learned | sinusoidal
enum class VocabType { kUnigram, kBpe };                            ///< unigram | bpe
enum class Normalization { kNmtNfkc, kNfkc, kIdentity };            ///< nmt_nfkc | nfkc | identity
enum class Precision { kAuto, kFp32, kBf16 };                       ///< auto | fp32 | bf16
enum class DecayOn { kAll, kMatrices, kLinear };                    ///< all | matrices | linear
enum class Schedule { kInverseSqrt, kConstant, kLinear, kCosine };  ///< inverse_sqrt | ...
enum class Metric { kBleu, kLoss };                                 ///< bleu | loss
enum class MbrMetric { kBleu, kChrf };                              ///< bleu | chrf
enum class SearchKind { kBeam, kGreedy, kSample, kNucleus };        ///< beam | greedy | ...
enum class InitKeep { kNone, kOptimizer };                          ///< none | optimizer
enum class Quantization { kNone, kInt8 };                           ///< none | int8
enum class LangTag { kNone, kSource, kTarget };                     ///< none | source | target

template <>
struct ChoiceNames<Activation> {
  static constexpr std::pair<Activation, const char*> names[] = {{Activation::kRelu, "relu"},
                                                                 {Activation::kGelu, "gelu"}};
};
template <>
struct ChoiceNames<Norm> {
  static constexpr std::pair<Norm, const char*> names[] = {{Norm::kPost, "post"},
                                                           {Norm::kPre, "pre"}};
};
template <>
struct ChoiceNames<Positions> {
  static constexpr std::pair<Positions, const char*> names[] = {
      {Positions::kLearned, "learned"}, {Positions::kSinusoidal, "sinusoidal"}};
};
template <>
struct ChoiceNames<VocabType> {
  static constexpr std::pair<VocabType, const char*> names[] = {{VocabType::kUnigram, "unigram"},
                                                                {VocabType::kBpe, "bpe"}};
};
template <>
struct ChoiceNames<Normalization> {
  static constexpr std::pair<Normalization, const char*> names[] = {
      {Normalization::kNmtNfkc, "nmt_nfkc"},
      {Normalization::kNfkc, "nfkc"},
      {Normalization::kIdentity, "identity"}};
};
template <>
struct ChoiceNames<Precision> {
  static constexpr std::pair<Precision, const char*> names[] = {
      {Precision::kAuto, "auto"}, {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"}};
};
template <>
struct ChoiceNames<DecayOn> {
  static constexpr std::pair<DecayOn, const char*> names[] = {
      {DecayOn::kAll, "all"}, {DecayOn::kMatrices, "matrices"}, {DecayOn::kLinear, "linear"}};
};
template <>
struct ChoiceNames<Schedule> {
  static constexpr std::pair<Schedule, const char*> names[] = {
      {Schedule::kInverseSqrt, "inverse_sqrt"},
      {Schedule::kConstant, "constant"},
      {Schedule::kLinear, "linear"},
      {Schedule::kCosine, "cosine"}};
};
template <>
struct ChoiceNames<Metric> {
  static constexpr std::pair<Metric, const char*> names[] = {{Metric::kBleu, "bleu"},
                                                             {Metric::kLoss, "loss"}};
};
template <>
struct ChoiceNames<InitKeep> {
  static constexpr std::pair<InitKeep, const char*> names[] = {{InitKeep::kNone, "none"},
                                                               {InitKeep::kOptimizer, "optimizer"}};
};
template <>
struct ChoiceNames<Quantization> {
  static constexpr std::pair<Quantization, const char*> names[] = {{Quantization::kNone, "none"},
                                                                   {Quantization::kInt8, "int8"}};
};
template <>
struct ChoiceNames<LangTag> {
  static constexpr std::pair<LangTag, const char*> names[] = {
      {LangTag::kNone, "none"}, {LangTag::kSource, "source"}, {LangTag::kTarget, "target"}};
};
template <>
struct ChoiceNames<SearchKind> {
  static constexpr std::pair<SearchKind, const char*> names[] = {{SearchKind::kBeam, "beam"},
                                                                 {SearchKind::kGreedy, "greedy"},
                                                                 {SearchKind::kSample, "sample"},
                                                                 {SearchKind::kNucleus, "nucleus"}};
};
template <>
struct ChoiceNames<MbrMetric> {
  static constexpr std::pair<MbrMetric, const char*> names[] = {{MbrMetric::kBleu, "bleu"},
                                                                {MbrMetric::kChrf, "chrf"}};
};

/// Transformer shape and regularisation (Vaswani et al. 2017, "Attention Is All You Need").
struct ModelConfig {
  int64_t d_model = 256;           ///< residual stream width
  int64_t n_heads = 4;             ///< attention heads; must divide d_model
  int64_t encoder_layers = 3;      ///< encoder layers
  int64_t decoder_layers = 3;      ///< decoder layers
  int64_t d_ff = 1024;             ///< inner width of the position-wise feed-forward block
  double dropout = 0.1;            ///< dropout on embeddings, sublayer outputs and FFN hidden
  double attention_dropout = 0.1;  ///< dropout on attention weights
  /// Word dropout (Gal & Ghahramani 2016; Sennrich & Zhang 2019): the probability that a whole
  /// token's embedding, source or target side, is zeroed (kept ones scaled by 1/(1-p)); 0 = off
  double word_dropout = 0.0;
  Activation activation = Activation::kRelu;  ///< FFN activation: relu | gelu
  Norm norm = Norm::kPost;  ///< post (the paper, §3.1) | pre (LayerNorm before sublayer)
  Positions positions = Positions::kLearned;  ///< learned (tutorial) | sinusoidal (the paper, §3.5)
  int64_t max_len = 256;  ///< longest sequence (pieces incl. bos/eos) learned positions cover
  bool share_embeddings = false;  ///< one embedding matrix for source and target (joint vocab)
  bool tie_output = false;        ///< output projection reuses the target embedding (§3.4)
  int64_t src_vocab_size = 0;     ///< source vocabulary; 0 = taken from the tokenizer at training
  int64_t tgt_vocab_size = 0;     ///< target vocabulary; 0 = taken from the tokenizer at training

  template <class F>
  void fields(F&& f) {
    f("d_model", d_model, Option().range(1)), f("n_heads", n_heads, Option().range(1)),
        f("encoder_layers", encoder_layers, Option().range(1));
    f("decoder_layers", decoder_layers, Option().range(1)), f("d_ff", d_ff, Option().range(1)),
        f("dropout", dropout, Option().range(0, 0.99));
    f("attention_dropout", attention_dropout, Option().range(0, 0.99)),
        f("word_dropout", word_dropout, Option().range(0, 0.99));
    f("activation", activation), f("norm", norm);
    f("positions", positions), f("max_len", max_len, Option().range(2)),
        f("share_embeddings", share_embeddings);
    f("tie_output", tie_output), f("src_vocab_size", src_vocab_size, Option().range(0));
    f("tgt_vocab_size", tgt_vocab_size, Option().range(0));
  }
  /// Throws nmt::Error naming the first key whose value is out of range.
  void validate() const;
};

/// Training-time noise (data.augment), applied on the fly to each epoch's training pairs and
/// reproducible from data.seed: a model that saw headings in capitals and chat without full
/// stops translates them (OpusTrainer's modifiers; Marian's --all-caps-every). Each value is the
/// probability that a pair gets the modification; 0 everywhere (the default) trains on the data
/// as it is. Validation, evaluation and translation never see it.
struct AugmentConfig {
  double upper = 0.0;  ///< both sides upper-cased (ICU's full case mapping for each language)
  double title = 0.0;  ///< both sides in Title Case (never together with upper in one pair)
  /// the final punctuation (. ! ? … and the like) dropped from both sides, when the source ends
  /// with some
  double no_final_punct = 0.0;
  /// character typos on the source side only (a letter swapped with the next, dropped, doubled or
  /// replaced by another of the sentence's): one per started 40 characters
  double typos = 0.0;

  template <class F>
  void fields(F&& f) {
    f("upper", upper, Option().range(0, 1)), f("title", title, Option().range(0, 1)),
        f("no_final_punct", no_final_punct, Option().range(0, 1)),
        f("typos", typos, Option().range(0, 1));
  }
  /// Whether any modification is switched on.
  bool any() const { return upper > 0.0 || title > 0.0 || no_final_punct > 0.0 || typos > 0.0; }
  void validate() const;
};

/// Corpora, languages, subword model and batching. Relative paths (data.dir, corpus files,
/// SentencePiece models) are taken from the working directory.
struct DataConfig {
  std::string dir = "data/multi30k";  ///< folder of the split corpora: <split>.<lang>[.gz] files
  /// source language: any code of 1-32 characters from [A-Za-z0-9_-] (en, pt-BR, ja); it names
  /// files (<split>.<lang>, spm.<lang>.model) and, for a Chinese or Japanese target, picks the
  /// BLEU tokenizer (train.bleu_tokenize auto). A data.train/data.valid entry's own "src_lang" /
  /// "tgt_lang" override these two for that corpus: several pairs in one model
  /// (docs/multilingual.md)
  std::string src_lang = "en";
  std::string tgt_lang = "de";  ///< target language; swap the two for the other direction
  /// Training corpora, each a split name of data.dir, {"src": PATH, "tgt": PATH} (two aligned
  /// files) or {"tsv": PATH, "src_column": 0, "tgt_column": 1}, with an optional "weight": per
  /// epoch a corpus of n kept pairs contributes round(weight x n) of them: floor(weight) copies
  /// of each, then the rest drawn without repetition by a generator seeded from (data.seed,
  /// epoch) (docs/training.md). One string or object is a list of one. Old name: train_split.
  std::vector<CorpusSpec> train = {CorpusSpec::of_split("train")};
  /// Validation corpora, in any of the forms of data.train (no weight). An entry without its
  /// own languages in a run of several pairs is a split validated in every pair (a "val" split
  /// means val.en/val.de, val.en/val.fr, ...). Every pair trained needs one. Old name:
  /// valid_split.
  std::vector<CorpusSpec> valid = {CorpusSpec::of_split("val")};
  /// Where a model of several target languages is told which one to produce: none (one target
  /// language) | source (a "<2xx>" token before the source: Johnson et al. 2017) | target (the
  /// target starts with "<2xx>", forced when decoding). The tags are user-defined SentencePiece
  /// symbols of the run's tokenizer.
  LangTag lang_tag = LangTag::kNone;
  /// Sampling across language pairs (data.train entries with their own languages): pair p of
  /// n_p pairs per epoch (after the corpus weights) gets a share proportional to n_p^(1/T);
  /// 1 = as the data is, 5 = close to uniform. The tokenizer's sample is balanced the same way.
  double sampling_temperature = 1.0;
  /// An existing SentencePiece model to reuse instead of training one (copied into the run
  /// directory); its pad/unk/bos/eos ids must be 0/1/2/3. Joint unless spm_model_tgt is given.
  std::string spm_model;
  /// The target side's model when the two sides have separate models (data.joint_vocab false).
  std::string spm_model_tgt;
  int64_t vocab_size = 8000;                   ///< SentencePiece vocabulary size (per model)
  VocabType vocab_type = VocabType::kUnigram;  ///< unigram | bpe
  bool joint_vocab = true;                     ///< one SentencePiece model for both languages
  double character_coverage = 1.0;             ///< SentencePiece character coverage
  /// SentencePiece's normalisation of both sides, kept in its model: nmt_nfkc (NFKC, plus
  /// whitespace and control characters) | nfkc | identity (the text as written). NFKC maps
  /// full-width punctuation to ASCII ("，" to ","), so a model then writes Chinese and Japanese
  /// with ASCII commas, question marks and colons its references do not have.
  Normalization normalization = Normalization::kNmtNfkc;
  /// Each SentencePiece model trains on at most this many sentences: a random sample of the
  /// training lines (half as many lines for a joint model, which takes both sides), drawn across
  /// all data.train corpora with a generator seeded from data.seed and bounded by
  /// data.spm_characters as well; every line, in corpus order, when the corpora fit both bounds
  /// (docs/scaling.md)
  int64_t spm_sentences = 1000000;
  /// Each SentencePiece model trains on at most this many characters as well (Unicode code
  /// points; a joint model counts both sides of its lines), since SentencePiece's memory grows
  /// with them: the default keeps `nmt prepare` under 3 GB however long the lines are
  /// (docs/scaling.md)
  int64_t spm_characters = 100000000;
  /// Pairs with a side longer than this (pieces) are dropped from training and the validation
  /// loss; validation BLEU/chrF, `evaluate` and `translate` split such a line and join the parts
  int64_t max_len = 100;
  /// Token budget of a training batch: rows × (longest source + 1 for eos) and rows × (longest
  /// target + 1) each stay within it, padding included (a row is a sentence pair; a pair too long
  /// for the budget on its own is a batch by itself). decode.batch_tokens counts the same way.
  int64_t batch_tokens = 4096;
  int64_t pool_batches = 100;  ///< length-sort pools of this many batches
  int64_t seed = 1;            ///< seed of the batch order (mixed with the epoch number)
  /// Subword regularization of the training split: every epoch re-segments each sentence by
  /// sampling (Kudo 2018) instead of taking the best segmentation. Unigram: the sampling
  /// distribution's sharpness α (0 = off; 0.1-0.5 typical); bpe: BPE-dropout's merge dropout
  /// probability. Validation, evaluation and translation always use the best segmentation.
  double subword_alpha = 0.0;
  int64_t subword_nbest = -1;  ///< unigram: sample from the n best segmentations; -1 = all of them
  AugmentConfig augment;       ///< training-time noise: {"upper": p, "title": p, ...} (above)

  template <class F>
  void fields(F&& f) {
    f("dir", dir), f("src_lang", src_lang), f("tgt_lang", tgt_lang);
    f("train", train), f("valid", valid), f("lang_tag", lang_tag);
    f("sampling_temperature", sampling_temperature, Option().range(0.1, 100)),
        f("spm_model", spm_model);
    f("spm_model_tgt", spm_model_tgt), f("vocab_size", vocab_size, Option().range(16, 1000000));
    f("vocab_type", vocab_type), f("joint_vocab", joint_vocab);
    f("character_coverage", character_coverage, Option().range(0.9, 1)),
        f("normalization", normalization), f("spm_sentences", spm_sentences, Option().range(1));
    f("spm_characters", spm_characters, Option().range(1)),
        f("max_len", max_len, Option().range(1));
    f("batch_tokens", batch_tokens, Option().range(1)),
        f("pool_batches", pool_batches, Option().range(1)), f("seed", seed, Option().range(0));
    f("subword_alpha", subword_alpha, Option().range(0, 1)), f("subword_nbest", subword_nbest);
    f("augment", augment);
  }
  void validate() const;
};

/// Optimisation, schedule, limits, validation and checkpointing.
/// train.warmup: the linear warmup to the peak learning rate, in optimizer steps (800) or as a
/// share of the run's budget ("10%": of its nearest limit, max_steps, max_minutes or
/// max_epochs, so that a short run still reaches its peak and a long one warms up as long as its
/// share). In JSON an integer or a string "N%" (or "N", steps).
struct Warmup {
  int64_t steps = 4000;  ///< used when percent is 0
  double percent = 0.0;  ///< > 0: the share of the budget, in percent
  /// The share of the budget as a fraction (0 when counted in steps).
  double share() const { return percent / 100.0; }
  /// As the config writes it: "800" or "10%".
  std::string text() const;
  bool operator==(const Warmup& other) const {
    return steps == other.steps && percent == other.percent;
  }
};

Warmup warmup_from_json(const nlohmann::json& value, const std::string& where);
nlohmann::json warmup_to_json(const Warmup& warmup);

struct TrainConfig {
  std::string name = "run";     ///< run name; the run directory defaults to checkpoints/<name>
  std::string run_dir;          ///< run directory; empty = checkpoints/<name>
  int64_t seed = 1;             ///< seed of initialisation and dropout
  std::string device = "auto";  ///< auto | cpu | cuda | cuda:N
  int64_t threads = 0;          ///< CPU threads for LibTorch; 0 = one per core
  /// Data-parallel workers on the CPU (train/data_parallel.h): each step's batch is split into
  /// this many shards that run at once, one single-threaded worker each; 0 = auto: one per
  /// thread (train.threads) in fp32, off in bf16 (where 2 workers were no faster); 1 = off
  /// (every op uses all threads). Ignored on CUDA.
  int64_t cpu_workers = 1;
  /// fp32 | bf16 (autocast; residual stream and loss stay fp32) | auto (bf16 on a CPU with
  /// AVX512-BF16, fp32 on other CPUs and on CUDA: core/precision.h)
  Precision precision = Precision::kFp32;
  double lr = 5e-4;           ///< peak learning rate
  double adam_beta1 = 0.9;    ///< Adam β1
  double adam_beta2 = 0.98;   ///< Adam β2 (the paper, §5.3)
  double adam_eps = 1e-9;     ///< Adam ε
  double weight_decay = 0.0;  ///< decoupled weight decay (AdamW); 0 = plain Adam
  /// Which parameters weight_decay applies to: all | matrices (every parameter with 2+
  /// dimensions: linear weights and embeddings; biases and layer-norm gains are exempt) |
  /// linear (linear layers' weights only: embeddings, and so a tied output layer, are exempt too)
  DecayOn weight_decay_on = DecayOn::kAll;
  Schedule schedule =
      Schedule::kInverseSqrt;    ///< inverse_sqrt | constant | linear | cosine (last two
                                 ///< decay to 0 at the run's step/time/epoch limit)
  Warmup warmup;                 ///< steps (800) or a share of the budget ("10%"; every schedule)
  double label_smoothing = 0.1;  ///< label smoothing ε (§5.4)
  /// R-Drop (Liang et al. 2021): > 0 runs every batch through the model twice (two dropout
  /// masks) and adds this times the symmetric KL divergence between the two output
  /// distributions to the two copies' cross-entropy; 0 = off. Each step costs about twice.
  double rdrop_alpha = 0.0;
  double clip_norm = 1.0;    ///< gradient clipping by global norm; 0 = off
  int64_t accum_steps = 1;   ///< batches accumulated per optimizer step
  int64_t max_epochs = 20;   ///< stop after this many epochs; 0 = no limit
  int64_t max_steps = 0;     ///< stop after this many optimizer steps; 0 = no limit
  double max_minutes = 0.0;  ///< stop after this much training time; 0 = no limit
  /// Stop, saving last.pt (a resume goes on), when the process's own resident memory (not the
  /// pages of files it maps) passes this many GB after the allocator has given back what it
  /// held free (checked every log_every steps); 0 = 90% of the machine's memory or of its
  /// cgroup's lower limit, shared by the ranks on the machine. Not a budget: the run ends with
  /// an error (exit 2), so that a growth nobody expected never fills the host.
  double max_memory_gb = 0.0;
  int64_t log_every = 50;          ///< steps between log lines / metrics records
  int64_t validate_every = 0;      ///< validate every N steps; 0 = at every epoch's end
  bool validate_at_start = false;  ///< validate once before the first step
  bool valid_bleu = true;          ///< decode the validation set greedily for BLEU
  /// Validation's output limit: source length + this (an untrained model babbles to the limit,
  /// so decode.max_len_offset would make early validations many times slower).
  int64_t valid_max_len_offset = 16;
  /// Validation BLEU's tokenizer, with sacreBLEU's names: auto (zh for a Chinese target,
  /// ja-mecab for Japanese, else 13a) | 13a | intl | char | zh | ja-mecab | none
  BleuTokenizer bleu_tokenize = BleuTokenizer::kAuto;
  Metric metric = Metric::kBleu;  ///< early stopping / best checkpoint metric: bleu | loss
  int64_t patience = 0;           ///< validations without improvement before stopping; 0 = off
  int64_t keep_checkpoints = 5;  ///< step checkpoints kept (besides last and best), for nmt average
  /// The run's final average (train/snapshots.h): this many snapshots of the weights, evenly
  /// spaced over the last average_window of the budget (the last one at its end), averaged into
  /// averaged.pt when the run ends; 0 = none
  int64_t average_snapshots = 8;
  double average_window = 0.3;  ///< fraction of the budget (step, time or epoch limit) averaged
  /// An exponential moving average of the weights (train/ema.h), updated after every step with
  /// this decay (0.999: about the last 1,000 steps); validation, best.pt, the step checkpoints
  /// and last.pt hold it; 0 = off
  double ema_decay = 0.0;
  /// Extra corpora (splits of data.dir such as test_2016_flickr, or any form of data.valid)
  /// whose greedy BLEU/chrF are logged at every validation, to see how fast a run gets
  /// somewhere; never used to pick checkpoints or stop. Metrics keys use CorpusSpec::name().
  std::vector<CorpusSpec> monitor_splits;
  /// Fine-tuning (nmt train --init-from): what is kept of the parent besides its weights and
  /// tokenizer: none (a fresh optimizer) | optimizer (its Adam moments; the parent must be a
  /// last.pt, as a run directory resolves to then)
  InitKeep init_keep = InitKeep::kNone;
  /// Multi-process training (docs/distributed.md): seconds after which a collective that some
  /// rank never joins (stalled, killed) ends every rank with an error; the rendezvous at start-up
  /// waits at most min(this, 60). Must exceed the longest rank-0-only phase (validation).
  double dist_timeout = 300.0;
  /// Train on fewer than 500 training pairs or a validation set of fewer than 20 (otherwise an
  /// error with the numbers: too little to train a useful model or to judge it).
  bool allow_small_data = false;
  static constexpr size_t kMinTrainPairs = 500;
  static constexpr size_t kMinValidPairs = 20;

  template <class F>
  void fields(F&& f) {
    f("name", name), f("run_dir", run_dir), f("seed", seed, Option().range(0)), f("device", device);
    f("threads", threads, Option().range(0, 1024)),
        f("cpu_workers", cpu_workers, Option().range(0, 256)), f("precision", precision);
    f("lr", lr, Option().range(1e-9, 10)), f("adam_beta1", adam_beta1, Option().range(0, 0.999999));
    f("adam_beta2", adam_beta2, Option().range(0, 0.999999)),
        f("adam_eps", adam_eps, Option().range(0, 1)),
        f("weight_decay", weight_decay, Option().range(0));
    f("weight_decay_on", weight_decay_on);
    f("schedule", schedule), f("warmup", warmup);
    f("label_smoothing", label_smoothing, Option().range(0, 0.99)),
        f("rdrop_alpha", rdrop_alpha, Option().range(0, 1000));
    f("clip_norm", clip_norm, Option().range(0));
    f("accum_steps", accum_steps, Option().range(1)),
        f("max_epochs", max_epochs, Option().range(0)),
        f("max_steps", max_steps, Option().range(0));
    f("max_minutes", max_minutes, Option().range(0)), f("log_every", log_every, Option().range(1));
    f("max_memory_gb", max_memory_gb, Option().range(0));
    f("validate_every", validate_every, Option().range(0)),
        f("validate_at_start", validate_at_start);
    f("valid_bleu", valid_bleu), f("valid_max_len_offset", valid_max_len_offset, Option().range(1)),
        f("bleu_tokenize", bleu_tokenize), f("metric", metric),
        f("patience", patience, Option().range(0));
    f("keep_checkpoints", keep_checkpoints, Option().range(0)),
        f("average_snapshots", average_snapshots, Option().range(0, 1000));
    f("average_window", average_window, Option().range(0, 1)), f("ema_decay", ema_decay);
    f("monitor_splits", monitor_splits);
    f("init_keep", init_keep), f("dist_timeout", dist_timeout, Option().range(1, 86400)),
        f("allow_small_data", allow_small_data);
  }
  void validate() const;
  /// The run directory this config resolves to.
  std::filesystem::path resolved_run_dir() const;
};

/// Decoding (translate, evaluate, validation BLEU).
struct DecodeConfig {
  /// The decoding strategy (decode/searcher.h; one Searcher each): beam search of width `beam`
  /// (1 = greedy), greedy (the most probable token at each step; `beam` must be 1), sample
  /// (`sample` draws per input, epsilon sampling) or nucleus (`sample` draws, top-p sampling).
  /// MBR (`mbr`) reranks the candidates of any of them.
  SearchKind search = SearchKind::kBeam;
  int64_t beam = 1;             ///< beam size; 1 = greedy
  int64_t nbest = 1;            ///< hypotheses printed per input (≤ beam)
  double length_penalty = 0.6;  ///< GNMT α in ((5+|y|)/6)^α (Wu et al. 2016, §7)
  int64_t max_len_offset = 50;  ///< output limit = source length + this
  /// Token budget of one decoding batch, counted as data.batch_tokens: rows × (longest source + 1
  /// for eos), padding included, where every source is `beam` rows, or `sample` rows when
  /// sampling (its hypotheses or samples are decoded side by side): a wider beam decodes fewer
  /// sources at once, not more memory. A source too long for the budget on its own is decoded
  /// alone. Teacher-forced losses (validation, evaluate) batch by it with one row per pair.
  int64_t batch_tokens = 4096;
  /// Beam search stops a sentence once no live hypothesis can beat its nbest-th best finished
  /// score (or once `beam` have finished). false: exact, at any length up to the output limit.
  /// true: early, at the hypothesis' next length only (Hugging Face's early_stopping=False
  /// bound): faster, but a longer hypothesis that only the length penalty favours can be lost.
  bool early_stopping = false;
  /// Minimum Bayes risk decoding (decode/mbr.h): the beam's `mbr` best hypotheses are the
  /// candidates and pseudo-references, the output is the one with the highest expected
  /// `mbr_metric` (the n-best list is ordered by it). 0 = off; else nbest <= mbr <= beam.
  int64_t mbr = 0;
  MbrMetric mbr_metric = MbrMetric::kBleu;  ///< bleu | chrf
  /// Draws per input of search = sample or nucleus (decode/search.h, sample_search): translations
  /// drawn from the model token by token, after removing unlikely tokens: those whose probability
  /// is below `epsilon` (sample: epsilon sampling, Hewitt et al. 2022; 0 = plain ancestral
  /// sampling), or those outside the smallest set of most probable tokens whose probabilities
  /// add up to `top_p` (nucleus: Holtzman et al. 2020). The n-best list holds the distinct
  /// samples, most probable first. With `mbr`, the `mbr` most probable distinct samples are the
  /// candidates and all `sample` draws the pseudo-references (each weighted 1/sample: a Monte
  /// Carlo estimate of the expected utility). 0 with the other strategies.
  int64_t sample = 0;
  double epsilon = 0.02;
  double top_p = 0.9;
  int64_t seed = 1;  ///< sampling seed: the same inputs, seed and batches give the same samples
  /// Weights of the linear layers when decoding on a CPU: none (as the checkpoint has them; in
  /// float32 on a CPU with AVX2, packed once for nmt's GEMM kernel, cpu/packed_linear.h) or int8
  /// (quantized per output row when the model loads, as nmt export writes them for CTranslate2,
  /// the embedding tables too; activations per row at each step; cpu/int8_linear.h). Training
  /// ignores it; teacher-forced scores (nmt score, evaluate's loss) use the same weights as the
  /// decoding.
  Quantization quantization = Quantization::kNone;
  /// A token that would repeat an n-gram of this size already in the output is never chosen
  /// (CTranslate2's option of the same name; decode/repetition.h): 0 = off. Greedy, beam and
  /// sampling search; constrained search ignores it.
  int64_t no_repeat_ngram_size = 0;
  /// The log-probability of every token already in the output is multiplied by this before each
  /// step's renormalisation (CTranslate2's option of the same name; Keskar et al. 2019): > 1
  /// makes repeats less likely, 1 = off. Not in constrained search.
  double repetition_penalty = 1.0;
  /// A lexical shortlist file (`nmt shortlist`; decode/shortlist.h): each batch scores only the
  /// target pieces its sources' pieces make likely, plus the most frequent ones, instead of the
  /// whole vocabulary (Marian's --shortlist, CTranslate2's vmap). Empty: the whole vocabulary.
  /// A file learned for another tokenizer is refused. Not settable by server requests.
  std::string shortlist;

  template <class F>
  void fields(F&& f) {
    // Each key once, with its flag, help, range and whether a server request may set it
    // (core/option.h); nbest, sample and mbr depend on the strategy: validate() checks them.
    f("search", search,
      Option("S", "decoding strategy (--sample N alone: sample; sample: epsilon, nucleus: top-p)"));
    f("beam", beam, Option("N", "beam size (1: greedy)").range(1, 1000).request());
    f("nbest", nbest, Option("K", "hypotheses per input (<= beam, or <= samples)").request());
    f("length_penalty", length_penalty,
      Option("A", "GNMT length penalty alpha").range(0, 10).request());
    f("max_len_offset", max_len_offset,
      Option("N", "output limit: source length + N pieces").flag("max-len").range(1).request());
    f("batch_tokens", batch_tokens,
      Option("N", "token budget per decoding batch: sources x beam (or samples) x longest source")
          .range(1));
    f("early_stopping", early_stopping,
      Option("true|false",
             "beam search: stop a sentence once no live hypothesis can beat its finished ones at "
             "its current length (faster, not exact; =false: exact search)"));
    f("mbr", mbr, Option("N", "minimum Bayes risk decoding over the N best candidates (0: off)"));
    f("mbr_metric", mbr_metric, Option("M", "MBR utility (sentence-level)"));
    f("sample", sample,
      Option("N",
             "draw N translations per input by sampling instead of beam search (with --mbr "
             "M: MBR over the M most probable, against all N draws)"));
    f("epsilon", epsilon,
      Option("E",
             "--search sample: drop tokens with probability below E (0: plain ancestral "
             "sampling)")
          .range(0, 0.5));
    f("top_p", top_p,
      Option("P",
             "--search nucleus: keep the most probable tokens whose probabilities add up to "
             "P")
          .range(0.01, 1));
    f("seed", seed, Option("S", "sampling seed"));
    f("quantization", quantization, Option("Q", "CPU decoding with int8 linear layers"));
    f("no_repeat_ngram_size", no_repeat_ngram_size,
      Option("N", "never repeat an n-gram of this size within an output (0: off)")
          .range(0, 100)
          .request());
    f("repetition_penalty", repetition_penalty,
      Option("P",
             "multiply the log-probability of tokens already in the output by P (> 1 "
             "discourages repeats; 1: off)")
          .range(1, 10)
          .request());
    f("shortlist", shortlist,
      Option("FILE",
             "score only the target pieces this lexical shortlist (nmt shortlist) lists "
             "for the batch's source pieces, plus the frequent ones (none: the whole "
             "vocabulary)")
          .empty_as("none"));
  }
  void validate() const;
  /// Every field that fields() lists is equal: the same inputs give the same outputs.
  bool operator==(const DecodeConfig& other) const;
  bool operator!=(const DecodeConfig& other) const { return !(*this == other); }
  /// What an entry point (command line, server request) completes from the options it was given;
  /// validate() comes after. A number of draws given without a strategy samples (search =
  /// sample); greedy without a beam decodes one hypothesis (beam = 1); an n-best list or MBR
  /// candidate list longer than a beam that was not given widens it: beam = max(beam, nbest,
  /// mbr).
  void complete(bool search_given, bool beam_given);
  /// Whether the strategy draws samples (sample, nucleus) rather than searching.
  bool samples() const { return search == SearchKind::kSample || search == SearchKind::kNucleus; }
  /// How many hypotheses the search returns per input, and how many rows it decodes per source:
  /// `sample` when sampling, else `beam`.
  int64_t candidates() const { return samples() ? sample : beam; }
  /// This config as a plain beam search of width `beam_size` (greedy for 1): one hypothesis, no
  /// MBR, no sampling. What validation BLEU and the decoding benchmark run.
  DecodeConfig plain_search(int64_t beam_size) const;
};

/// One value of a key given as "auto": what auto sizing (train/auto_recipe.h) chose and why, or
/// the explicit value that a later config layer or --set gave over "auto".
struct AutoChoice {
  std::string key;    ///< "data.vocab_size"
  std::string value;  ///< the value as JSON text: 3500, "10%"
  std::string why;    ///< the rule and the numbers it used
};

/// The keys that accept "auto" (sized from the corpus and the budget: docs/own_data.md).
const std::vector<std::string>& auto_sized_keys();

/// The whole configuration file: {"model": {...}, "data": {...}, "train": {...}, "decode": {...}}
/// and, once auto sizing has run, {"auto": {KEY: {"value": V, "why": TEXT}}}.
struct Config {
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  DecodeConfig decode;
  /// Keys given "auto" and not sized yet ("data.vocab_size"); their fields hold the defaults
  /// until train/auto_recipe.h sizes them. Written back as "auto".
  std::vector<std::string> auto_keys;
  /// What was chosen for the "auto" keys, and why; also explicit values that won over "auto".
  /// A record (config.json's "auto" object): the sections hold the values.
  std::vector<AutoChoice> auto_choices;
  /// What auto sizing warns of ("warning: ..."), for the log and stderr; not written to a file
  /// (a choice's reason keeps what a reader of config.json needs)
  std::vector<std::string> auto_warnings;

  /// Validates every section.
  void validate() const;
};

/// Reads `json` (an object of sections) over the defaults. Unknown sections/keys and wrong types
/// are errors naming `origin` and the key. Does not validate ranges.
Config config_from_json(const nlohmann::json& json, const std::string& origin);
/// Serialises every field of every section.
nlohmann::json config_to_json(const Config& config);
/// Loads and validates a JSON config file. Its optional top-level "inherit" names other config
/// files (one, or a list; relative to this file) that it builds on: they are read first, in
/// order, each with its own "inherit", and this file's keys override theirs key by key.
Config load_config(const std::filesystem::path& path);
/// Loads config files laid over each other in order (each with its "inherit"s resolved, later
/// files overriding earlier ones key by key), then validates the result once. Unknown keys in
/// any of them are errors naming the files.
Config load_configs(const std::vector<std::filesystem::path>& paths);
/// Writes the config as pretty JSON.
void save_config(const Config& config, const std::filesystem::path& path);
/// The first "section.key" whose value differs between `a` and `b` within `section`, with both
/// values, e.g. "model.d_model = 256 vs 512"; empty when the sections are equal.
std::string first_difference(const Config& a, const Config& b, const std::string& section);
/// Applies one `section.key=value` override; the value is parsed as JSON, else taken as a string.
void apply_override(Config& config, const std::string& assignment);
/// Applies overrides in order, then validates.
void apply_overrides(Config& config, const std::vector<std::string>& assignments);

}  // namespace nmt
