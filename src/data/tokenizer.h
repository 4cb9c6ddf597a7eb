#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/word_casing.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace nmt {

/// SentencePiece threads for training on `sentences` sentences: one per 100,000 sentences,
/// at least 1 and at most 16. The unigram trainer's E-step sums each thread's share of the
/// sentences separately, so the thread count changes the model (docs/scaling.md); a count that
/// depends on the data alone, never on the machine, keeps a training reproducible everywhere.
int64_t spm_train_threads(size_t sentences);

/// SentencePiece subword models for the source and target side: one joint model (both sides use
/// it) or two separate ones. Ids 0..3 are pad, unk, bos, eos (core/special_ids.h) in every model.
/// Encoded ids never include bos/eos; batching adds them.
class Tokenizer {
 public:
  /// Trains the model(s) on the training split named by `data` (text as read by read_lines),
  /// writing `<out_dir>/spm.model` (joint) or `<out_dir>/spm.<src_lang>.model` and
  /// `<out_dir>/spm.<tgt_lang>.model` (separate), and returns the loaded tokenizer.
  static Tokenizer train(const DataConfig& data, const std::vector<std::string>& src_sentences,
                         const std::vector<std::string>& tgt_sentences,
                         const std::filesystem::path& out_dir);

  /// The model file(s) train() writes into `dir` for this config: `spm.model` (joint) or
  /// `spm.<src_lang>.model` and `spm.<tgt_lang>.model` (source first).
  static std::vector<std::filesystem::path> model_files(const DataConfig& data,
                                                        const std::filesystem::path& dir);

  /// Loads model file(s) as written by train(): one path (joint) or two (src, tgt).
  /// A missing or corrupt file, or special ids other than 0..3, is an nmt::Error naming it.
  static Tokenizer load(const std::vector<std::filesystem::path>& model_files);

  /// Reuses existing models: data.spm_model (joint) or data.spm_model and data.spm_model_tgt
  /// (separate), checked as load() checks them, copied byte for byte to model_files(data,
  /// out_dir) so the run directory holds everything it needs. Special ids other than 0..3 are
  /// an nmt::Error that says how to train a compatible model.
  static Tokenizer reuse(const DataConfig& data, const std::filesystem::path& out_dir);

  /// Writes the serialized models to `files` (one or two, as model_files gives).
  void save(const std::vector<std::filesystem::path>& files) const;

  /// Loads from serialized model protos (what checkpoints embed): one (joint) or two (src, tgt).
  static Tokenizer from_serialized(const std::vector<std::string>& protos);

  /// Copies share the (immutable) models.
  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int64_t> encode_src(const std::string& text) const;
  std::vector<int64_t> encode_tgt(const std::string& text) const;
  /// One sampled segmentation (subword regularization; data.subword_alpha / subword_nbest):
  /// unigram models sample from the `nbest` best segmentations (-1: all, by
  /// forward-filtering backward-sampling) with probabilities ∝ P(x)^alpha; bpe models apply
  /// BPE-dropout with probability `alpha`. Decodes to the same text as encode_*'s ids. Draws from
  /// the calling thread's SentencePiece generator: call inside with_sampling_seed to reproduce.
  std::vector<int64_t> sample_src(const std::string& text, int64_t nbest, double alpha) const;
  std::vector<int64_t> sample_tgt(const std::string& text, int64_t nbest, double alpha) const;
  /// Runs `work` on a new thread whose SentencePiece random generator starts from `seed`
  /// (SentencePiece keeps one per thread, seeded at its first use), so the sample_* calls in
  /// `work` give the same segmentations for the same seed. Exceptions in `work` are rethrown.
  static void with_sampling_seed(uint32_t seed, const std::function<void()>& work);
  /// Pieces (for display, e.g. attention heat maps).
  std::vector<std::string> src_pieces(const std::string& text) const;
  std::vector<std::string> tgt_pieces(const std::vector<int64_t>& ids) const;
  /// Detokenized text; pad/bos/eos ids are skipped, decoding stops at nothing else; unk decodes
  /// as " ⁇ ". An id outside the vocabulary is an nmt::Error.
  std::string decode_tgt(const std::vector<int64_t>& ids) const;
  std::string decode_src(const std::vector<int64_t>& ids) const;

  /// The id of `piece` in the source / target model when it is one of its pieces (e.g. a
  /// user-defined language tag), else -1.
  int64_t src_piece_id(const std::string& piece) const;
  int64_t tgt_piece_id(const std::string& piece) const;

  /// The piece of id `id` in the source / target model; an id outside it is an nmt::Error.
  std::string src_piece(int64_t id) const;
  std::string tgt_piece(int64_t id) const;
  /// A stable fingerprint of the model(s): hex FNV-1a over the serialized protos. Files made for
  /// one vocabulary (a lexical shortlist) carry it.
  std::string fingerprint() const;

  int64_t src_vocab_size() const;
  int64_t tgt_vocab_size() const;
  bool joint() const;
  /// Serialized model protos: one (joint) or two (src, tgt); for checkpoints.
  std::vector<std::string> serialized() const;

  /// What the training sources say about casing (data/word_casing.h), shared by copies; null
  /// for a tokenizer loaded from model files alone or from a checkpoint written before nmt
  /// learned it.
  std::shared_ptr<const WordCasing> word_casing() const { return word_casing_; }
  void set_word_casing(WordCasing casing);

 private:
  Tokenizer();
  std::shared_ptr<sentencepiece::SentencePieceProcessor> src_;
  std::shared_ptr<sentencepiece::SentencePieceProcessor> tgt_;  // == src_ when joint
  std::shared_ptr<const WordCasing> word_casing_;
};

}  // namespace nmt
