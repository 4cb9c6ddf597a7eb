#include "decode/searcher.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"
#include "decode/mbr.h"

namespace nmt {
namespace {

/// Gives each translation its new score, orders them by it (highest first; ties keep the
/// current order) and keeps the first `keep`.
void rescore(std::vector<TranslatedText>& nbest, const std::vector<double>& scores, int64_t keep) {
  for (size_t i = 0; i < nbest.size(); ++i) nbest[i].score = scores[i];
  std::stable_sort(
      nbest.begin(), nbest.end(),
      [](const TranslatedText& a, const TranslatedText& b) { return a.score > b.score; });
  if (nbest.size() > size_t(keep)) nbest.resize(size_t(keep));
}

/// Beam search with the GNMT length penalty; with constraints, lexically constrained beam search.
class BeamSearcher : public Searcher {
 public:
  explicit BeamSearcher(const DecodeConfig& config) : Searcher(config), search_(config) {
    if (config.mbr > 0) search_.nbest = config.mbr;  // the search keeps MBR's candidates
  }
  std::vector<std::vector<Hypothesis>> search(const Ensemble& models, const at::Tensor& src,
                                              const std::vector<OutputGuide>& guides) override {
    return beam_search(models, src, search_, guides);
  }
  std::string describe() const override {
    char text[96];
    std::snprintf(text, sizeof text, "beam %lld, alpha %.2f", static_cast<long long>(config_.beam),
                  config_.length_penalty);
    return std::string(text) +
           (config_.beam > 1 && config_.early_stopping ? ", early stopping" : "");
  }
  bool keeps_constraints() const override { return true; }

 private:
  DecodeConfig search_;  // config_ with nbest = mbr under MBR
};

/// The most probable token at each step (greedy_search); a batch with constraints goes to the
/// constrained beam search of width 1, which keeps them.
class GreedySearcher : public BeamSearcher {
 public:
  using BeamSearcher::BeamSearcher;
  std::vector<std::vector<Hypothesis>> search(const Ensemble& models, const at::Tensor& src,
                                              const std::vector<OutputGuide>& guides) override {
    const bool constrained = std::any_of(
        guides.begin(), guides.end(), [](const OutputGuide& g) { return !g.constraints.empty(); });
    if (constrained) return BeamSearcher::search(models, src, guides);
    std::vector<std::vector<Hypothesis>> results;
    for (auto& hypothesis : greedy_search(models, src, config_, guides)) {
      results.push_back({std::move(hypothesis)});
    }
    return results;
  }
  std::string describe() const override {
    return config_.search == SearchKind::kGreedy ? "greedy" : BeamSearcher::describe();
  }
};

/// Epsilon sampling (Hewitt et al. 2022): tokens below probability decode.epsilon are removed.
class EpsilonSearcher : public SamplingSearcher {
 public:
  using SamplingSearcher::SamplingSearcher;

 protected:
  at::Tensor truncate(const at::Tensor& probs) const override {
    return epsilon_truncation(probs, config_.epsilon);
  }
  std::string truncation() const override {
    char text[48];
    std::snprintf(text, sizeof text, "epsilon %g", config_.epsilon);
    return text;
  }
};

}  // namespace

std::vector<TranslatedText> Searcher::rank(std::vector<Hypothesis> candidates,
                                           const Tokenizer& tokenizer) const {
  std::vector<TranslatedText> nbest;
  std::vector<std::string> texts;
  std::vector<double> log_probs;
  for (auto& h : candidates) {
    nbest.push_back({tokenizer.decode_tgt(h.tokens), h.score, std::move(h.tokens)});
    texts.push_back(nbest.back().text);
    log_probs.push_back(h.log_prob);
  }
  if (config_.mbr > 0) {
    rescore(nbest, mbr_expected_utilities(texts, log_probs, config_.mbr_metric), config_.nbest);
  }
  return nbest;
}

std::vector<TranslatedText> SamplingSearcher::rank(std::vector<Hypothesis> draws,
                                                   const Tokenizer& tokenizer) const {
  // Distinct translations by text (two segmentations can read the same), each with the
  // log-probability of its most probable draw and how many draws gave it.
  std::vector<TranslatedText> distinct;
  std::vector<double> counts;
  std::unordered_map<std::string, size_t> index;
  for (auto& draw : draws) {
    auto text = tokenizer.decode_tgt(draw.tokens);
    const auto [it, inserted] = index.emplace(text, distinct.size());
    if (inserted) {
      distinct.push_back({std::move(text), draw.log_prob, std::move(draw.tokens)});
      counts.push_back(1.0);
      continue;
    }
    auto& seen = distinct[it->second];
    counts[it->second] += 1.0;
    if (draw.log_prob > seen.score)
      seen.score = draw.log_prob, seen.tokens = std::move(draw.tokens);
  }
  // Most probable first (ties: the earlier draw), counts kept alongside.
  std::vector<size_t> order(distinct.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return distinct[a].score > distinct[b].score; });
  std::vector<TranslatedText> ranked;
  std::vector<std::string> references;
  std::vector<double> weights;
  for (const size_t i : order) {
    references.push_back(distinct[i].text);
    weights.push_back(counts[i] / static_cast<double>(draws.size()));
    ranked.push_back(std::move(distinct[i]));
  }
  if (config_.mbr == 0) {
    if (ranked.size() > size_t(config_.nbest)) ranked.resize(size_t(config_.nbest));
    return ranked;
  }
  // Candidates: the decode.mbr most probable; pseudo-references: every draw (Monte Carlo).
  if (ranked.size() > size_t(config_.mbr)) ranked.resize(size_t(config_.mbr));
  std::vector<std::string> candidates(references.begin(), references.begin() + ranked.size());
  rescore(ranked, mbr_expected_utilities(candidates, references, weights, config_.mbr_metric),
          config_.nbest);
  return ranked;
}

SamplingSearcher::SamplingSearcher(const DecodeConfig& config)
    : Searcher(config),
      generator_(at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(config.seed))) {}

std::vector<std::vector<Hypothesis>> SamplingSearcher::search(
    const Ensemble& models, const at::Tensor& src, const std::vector<OutputGuide>& guides) {
  return sample_search(models, src, config_, generator_, guides,
                       [this](const at::Tensor& probs) { return truncate(probs); });
}

std::string SamplingSearcher::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "%lld samples, %s, seed %lld",
                static_cast<long long>(config_.sample), truncation().c_str(),
                static_cast<long long>(config_.seed));
  return text;
}

std::unique_ptr<Searcher> make_nucleus_searcher(const DecodeConfig& config);

std::unique_ptr<Searcher> make_searcher(const DecodeConfig& config) {
  config.validate();
  switch (config.search) {
    case SearchKind::kBeam:
      if (config.beam == 1) return std::make_unique<GreedySearcher>(config);
      return std::make_unique<BeamSearcher>(config);
    case SearchKind::kGreedy:
      return std::make_unique<GreedySearcher>(config);
    case SearchKind::kSample:
      return std::make_unique<EpsilonSearcher>(config);
    case SearchKind::kNucleus:
      return make_nucleus_searcher(config);
  }
  throw Error("decode.search: unknown strategy");
}

}  // namespace nmt
