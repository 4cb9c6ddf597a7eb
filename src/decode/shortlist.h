#pragma once

// A lexical shortlist (Marian's --shortlist, CTranslate2's vocabulary map): for each source
// piece, the target pieces most likely to translate it, learned from parallel text. Decoding a
// batch then projects onto the union of its sources' lists, the most frequent target pieces and
// eos only (decode/ensemble.h), and each sentence's softmax runs over its own: the output
// projection shrinks from the whole target vocabulary to a few hundred rows, and a sentence
// translates the same alone or in any batch.
//
// The file is CTranslate2's vmap.txt (one line per source piece: the piece, a tab, its target
// pieces separated by spaces; the line with an empty piece lists the pieces always kept) under
// one header line naming the tokenizer it was learned for ("# nmt shortlist: vocabulary 0f3c...,
// 4000 source and 4000 target pieces, 50 per source, 100 frequent", on one line).

#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace nmt {

struct ShortlistOptions {
  int64_t per_source = 50;  ///< target pieces kept per source piece
  int64_t frequent = 100;   ///< most frequent target pieces, always candidates
  int64_t iterations = 5;   ///< EM iterations of IBM Model 1
};

class Shortlist {
 public:
  /// Learns from sentence pairs (ids without bos/eos): the translation table t(target | source)
  /// of IBM Model 1 (Brown et al. 1993: EM over every alignment, a null source in each
  /// sentence), each source piece keeping its options.per_source most probable target pieces;
  /// the options.frequent most frequent target pieces, eos and unk are always candidates.
  static Shortlist learn(const std::vector<std::vector<int64_t>>& sources,
                         const std::vector<std::vector<int64_t>>& targets, int64_t src_vocab_size,
                         int64_t tgt_vocab_size, const ShortlistOptions& options);

  /// Reads a file save() wrote. One made for another tokenizer (its header's vocabulary), a
  /// piece the tokenizer lacks or a malformed line is an nmt::Error naming the file and line.
  static Shortlist load(const std::filesystem::path& file, const Tokenizer& tokenizer);

  /// Writes the header and the vocabulary map (atomically: a temporary file, then renamed).
  void save(const std::filesystem::path& file, const Tokenizer& tokenizer) const;

  /// The vocabulary map alone, as CTranslate2 reads vmap.txt.
  void write_vmap(std::ostream& out, const Tokenizer& tokenizer) const;

  /// The sorted target ids (int64 [k], on the CPU) a batch src [batch, src_len] may produce: the
  /// lists of its source ids, the frequent pieces, and `forced` (prefixes and constraints).
  at::Tensor candidates(const at::Tensor& src, const std::vector<int64_t>& forced = {}) const;

  /// Which of a batch's `candidates` each of its sentences may not produce (bool [batch, k], on
  /// the CPU): those outside the sentence's own lists, the frequent pieces and its own `forced`
  /// ids (forced[b] for row b; rows past forced.size() have none). So a sentence's output is
  /// the same alone or in any batch. Undefined when none is blocked.
  at::Tensor blocked(const at::Tensor& src, const at::Tensor& candidates,
                     const std::vector<std::vector<int64_t>>& forced = {}) const;

  int64_t src_vocab_size() const { return static_cast<int64_t>(by_source_.size()); }
  int64_t tgt_vocab_size() const { return tgt_vocab_size_; }
  /// The list of source id `id` (most probable first) and the pieces always kept (sorted).
  const std::vector<int64_t>& list(int64_t id) const { return by_source_.at(size_t(id)); }
  const std::vector<int64_t>& always() const { return always_; }
  /// "50 per source piece, 100 frequent (2,436 of 4,000 pieces reachable)", for reports.
  std::string describe() const;

 private:
  /// [tgt_vocab_size]: 1 for the target ids source ids src[0, length) may produce.
  std::vector<char> wanted(const int64_t* src, int64_t length,
                           const std::vector<int64_t>& forced) const;

  std::vector<std::vector<int64_t>> by_source_;  ///< [src_vocab_size]: target ids, best first
  std::vector<int64_t> always_;                  ///< sorted
  int64_t tgt_vocab_size_ = 0;
  ShortlistOptions options_;
};

}  // namespace nmt
