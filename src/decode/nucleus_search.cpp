// The nucleus strategy (decode.search = nucleus): top-p sampling (Holtzman et al. 2020, "The
// Curious Case of Neural Text Degeneration", §3.1). At each step only the smallest set of most
// probable tokens whose probabilities add up to decode.top_p can be drawn. A strategy in one
// file: this class, a line in make_searcher and a name in ChoiceNames<SearchKind>.

#include <cstdio>
#include <memory>
#include <string>

#include "decode/searcher.h"

namespace nmt {
namespace {

class NucleusSearcher : public SamplingSearcher {
 public:
  using SamplingSearcher::SamplingSearcher;

 protected:
  at::Tensor truncate(const at::Tensor& probs) const override {
    // probs [rows, vocab], each row's mass below 1 where pad and bos were removed. A token stays
    // when the tokens more probable than it hold less than top_p of the row's mass: the most
    // probable one always, the one that crosses top_p too.
    if (config_.top_p >= 1.0) return probs;
    const auto [sorted, order] = probs.sort(-1, /*descending=*/true);
    const auto before = sorted.cumsum(-1) - sorted;  // mass of the more probable tokens
    const auto outside = before >= sorted.sum(-1, /*keepdim=*/true) * config_.top_p;  // sorted
    return probs.masked_fill(at::zeros_like(outside).scatter(-1, order, outside), 0.0);
  }
  std::string truncation() const override {
    char text[48];
    std::snprintf(text, sizeof text, "top-p %g", config_.top_p);
    return text;
  }
};

}  // namespace

std::unique_ptr<Searcher> make_nucleus_searcher(const DecodeConfig& config) {
  return std::make_unique<NucleusSearcher>(config);
}

}  // namespace nmt
