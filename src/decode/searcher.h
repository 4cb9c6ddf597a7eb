#pragma once

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/tokenizer.h"
#include "decode/ensemble.h"
#include "decode/search.h"

namespace nmt {

/// One translation of one input.
struct TranslatedText {
  std::string text;             ///< detokenized output
  double score = 0.0;           ///< search score (log-prob, length-penalised with beam > 1; a
                                ///< sample's log-prob); with decode.mbr, the expected utility
                                ///< (0..100) instead
  std::vector<int64_t> tokens;  ///< target ids, without bos/eos
};

/// A decoding strategy (decode.search): how one batch's candidates are found, and how one
/// input's candidates become its n-best list (MBR, decode.mbr, reranks them). make_searcher
/// makes one from a DecodeConfig; the options are its own for its lifetime, so callers whose
/// options differ (server requests) each make theirs. Not shared between decode_all calls: a
/// sampling strategy holds its generator, seeded with decode.seed.
///
/// A new strategy is a subclass in its own file (nucleus_search.cpp is one), a line in
/// make_searcher and a name in ChoiceNames<SearchKind>.
class Searcher {
 public:
  explicit Searcher(DecodeConfig config) : config_(std::move(config)) {}
  virtual ~Searcher() = default;
  Searcher(const Searcher&) = delete;
  Searcher& operator=(const Searcher&) = delete;

  /// The candidates of each row of src [rows, src_len] (padded, eos-terminated): a beam's
  /// n-best list, or the draws. `guides` (one per row, or empty) force prefixes; decode_all
  /// gives a batch with constraints only to a strategy that keeps_constraints().
  virtual std::vector<std::vector<Hypothesis>> search(const Ensemble& models, const at::Tensor& src,
                                                      const std::vector<OutputGuide>& guides) = 0;
  /// One input's candidates (as search returned them) -> its n-best list, best first, at most
  /// decode.nbest long. By default the candidates in their order, MBR-reranked with decode.mbr.
  virtual std::vector<TranslatedText> rank(std::vector<Hypothesis> candidates,
                                           const Tokenizer& tokenizer) const;
  /// The strategy in words, for reports ("beam 5, alpha 0.60").
  virtual std::string describe() const = 0;
  /// Whether terminology constraints can be kept (beam search); else check_guide refuses them.
  virtual bool keeps_constraints() const { return false; }
  /// Whether decode_all may decode several batches at once (false: one shared generator) and
  /// taper them; the outputs do not depend on the number of workers either way.
  virtual bool concurrent() const { return true; }

  const DecodeConfig& config() const { return config_; }

 protected:
  DecodeConfig config_;
};

/// The sampling strategies: decode.sample draws per input (sample_search), each token drawn
/// after truncate() has removed the unlikely ones. The n-best list holds the distinct draws, most
/// probable first; with decode.mbr, the decode.mbr most probable of them ordered by their expected
/// utility against all draws. The draws follow decode.seed; batches are decoded one at a time.
class SamplingSearcher : public Searcher {
 public:
  explicit SamplingSearcher(const DecodeConfig& config);
  std::vector<std::vector<Hypothesis>> search(const Ensemble& models, const at::Tensor& src,
                                              const std::vector<OutputGuide>& guides) override;
  std::vector<TranslatedText> rank(std::vector<Hypothesis> draws,
                                   const Tokenizer& tokenizer) const override;
  std::string describe() const override;
  bool concurrent() const override { return false; }

 protected:
  /// probs [rows, vocab] -> the same with the removed tokens at 0; the most probable token of
  /// each row stays.
  virtual at::Tensor truncate(const at::Tensor& probs) const = 0;
  /// The truncation in words ("epsilon 0.02").
  virtual std::string truncation() const = 0;

 private:
  at::Generator generator_;  // CPU: the draws do not depend on the device
};

/// The strategy decode.search names, with `config`'s options (validated).
std::unique_ptr<Searcher> make_searcher(const DecodeConfig& config);

}  // namespace nmt
