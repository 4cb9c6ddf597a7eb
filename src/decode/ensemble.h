#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "decode/shortlist.h"
#include "model/decoder.h"
#include "model/seq2seq.h"

namespace nmt {
namespace detail {
class EnsembleEvalModes;
}  // namespace detail

/// The models a search decodes with: one model, or several whose next-token log-probabilities
/// are averaged at every step (an ensemble, as Marian and fairseq average them). Members share
/// the vocabularies (the callers that load checkpoints check the tokenizers); they may differ in
/// depth and width. Copies share the members.
class Ensemble {
 public:
  /// One model (implicit: every search takes a single model as well).
  Ensemble(Seq2Seq model);  // NOLINT(google-explicit-constructor)
  /// Several; throws an nmt::Error when there are none or their vocabulary sizes differ.
  explicit Ensemble(std::vector<Seq2Seq> members);

  size_t size() const { return members_.size(); }
  /// Member i (a handle sharing the module).
  Seq2Seq member(size_t i) const { return members_[i]; }
  /// The first member: the one that answers for the ensemble where only one can (attention,
  /// alignment, the model's description).
  Seq2Seq front() const { return members_.front(); }
  /// The smallest model.max_len of the members: the longest sequence every member reads.
  int64_t max_len() const;

  /// A lexical shortlist every search over this ensemble (and its copies made after) scores
  /// with: each batch's output vocabulary is cut to Shortlist::candidates. Null: the whole
  /// vocabulary. A shortlist for another target vocabulary size is an nmt::Error.
  void set_shortlist(std::shared_ptr<const Shortlist> shortlist);
  const std::shared_ptr<const Shortlist>& shortlist() const { return shortlist_; }

 private:
  std::vector<Seq2Seq> members_;
  std::shared_ptr<const Shortlist> shortlist_;
};

/// The decoding state of a batch for every member: each member's encoder output in its decoder
/// cache, and the source mask. Members are in eval() mode while it lives (their previous mode is
/// restored after; a member already in eval() mode is only read, so threads may share it).
class EnsembleState {
 public:
  /// Encodes src [batch, src_len] (padded, eos-terminated) with every member. With the
  /// ensemble's shortlist, the batch's candidates (its sources' lists and `forced`: each
  /// source's target ids of its prefix and constraints, or none) are the only tokens it scores,
  /// and each sentence only its own (Shortlist::blocked).
  EnsembleState(const Ensemble& models, const at::Tensor& src,
                const std::vector<std::vector<int64_t>>& forced = {});
  ~EnsembleState();
  EnsembleState(const EnsembleState&) = delete;
  EnsembleState& operator=(const EnsembleState&) = delete;

  /// One incremental step: tokens [rows, new_len] -> the log-probabilities of the token after
  /// the last new position, [rows, tgt_vocab] float32: each member's log_softmax, averaged over
  /// the members, with pad and bos at -inf (never valid outputs). With a shortlist, the softmax
  /// is over the candidates and every other token is -inf.
  at::Tensor next_log_probs(const at::Tensor& tokens);
  /// Keeps rows `index` (int64 [new_rows]) of every cache and of the source mask, in that order.
  /// `same_sources`: every new row's source is the one its row had (beam search reordering
  /// within each sentence's rows, no sentence dropped), so only the self-attention caches move.
  /// After group_rows(n), `index` takes whole groups (DecoderCache::select).
  void select(const at::Tensor& index, bool same_sources = false);
  /// From now on each source is decoded in `rows` consecutive rows (beam search's beam) that
  /// share its encoder output and mask instead of copies (DecoderCache::group). Before the first
  /// step, or after steps with one row per source: each row's self-attention cache is then
  /// copied to its `rows` rows (beam search's first step decodes one row per sentence, where
  /// the beam's rows would all be the same).
  void group_rows(int64_t rows);

  const at::Tensor& src_mask() const { return src_mask_; }

 private:
  std::vector<Seq2Seq> members_;
  std::unique_ptr<detail::EnsembleEvalModes> eval_modes_;
  std::vector<DecoderCache> caches_;
  std::vector<OutputRows> rows_;  ///< per member, with a shortlist: its candidates' output rows
  at::Tensor blocked_;  ///< [sources, candidates]: not in that source's own shortlist, or undefined
  int64_t tgt_vocab_size_ = 0;
  at::Tensor src_mask_;  ///< [sources, 1, 1, src_len]: one per row, or per group of rows
};

/// log_softmax of logits [rows, vocab] in float32 with pad and bos set to -inf: they are never
/// valid outputs (as in fairseq, the other tokens keep the model's probabilities).
at::Tensor output_log_probs(const at::Tensor& logits);

}  // namespace nmt
