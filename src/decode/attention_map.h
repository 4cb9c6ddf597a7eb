#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/language_tags.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"

namespace nmt {

// Cross-attention of a translation from one teacher-forced pass of the decoder: what attention
// maps (nmt translate --attention, the server's /attention) and word alignments
// (decode/alignment.h) are made from. Apart from Translator: it needs the model, not a search.

/// Cross-attention of one sentence pair, for display.
struct AttentionMap {
  std::vector<std::string> src_pieces;  ///< source pieces + "</s>" (columns)
  std::vector<std::string> tgt_pieces;  ///< target pieces + "</s>" (rows)
  at::Tensor weights;                   ///< [tgt_len, src_len] float32, CPU; rows sum to 1
};

/// Which cross-attention to show: a layer (negative counts from the end: -1 = last) and a head
/// (-1 = the average over heads).
struct AttentionOptions {
  int64_t layer = -1;
  int64_t head = -1;
  /// Throws an nmt::Error naming the index and its valid range unless the layer is one of
  /// `model`'s decoder layers (-decoder_layers..decoder_layers-1) and the head one of its heads
  /// or -1 (-1..n_heads-1).
  void validate(const ModelConfig& model) const;
};

/// What a teacher-forced pass needs: the model (an ensemble's first member), its tokenizer and
/// device, and a multilingual model's tags with the target language (its tag goes where
/// translation puts it: a column or a row of its own). Copies share the model: cheap.
struct TeacherForcing {
  Seq2Seq model;
  Tokenizer tokenizer;
  at::Device device;
  LanguageTags tags;
  std::string tgt_lang;
};

/// Cross-attention of `source` translated as `target` (ids without bos/eos). The source is
/// checked and cut as translation does (encode_line); invalid UTF-8 and bad layer/head indices
/// are an nmt::Error naming the problem. Runs on the calling thread; the model is only read.
AttentionMap attention_map(const TeacherForcing& pass, const std::string& source,
                           const std::vector<int64_t>& target,
                           const AttentionOptions& options = {});

}  // namespace nmt
