#include "decode/ensemble.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/special_ids.h"
#include "decode/search_internal.h"

namespace nmt {

Ensemble::Ensemble(Seq2Seq model) : members_{std::move(model)} {}

Ensemble::Ensemble(std::vector<Seq2Seq> members) : members_(std::move(members)) {
  if (members_.empty()) throw Error("an ensemble needs at least one model");
  const auto& first = members_.front()->config();
  for (size_t i = 1; i < members_.size(); ++i) {
    const auto& other = members_[i]->config();
    if (other.src_vocab_size != first.src_vocab_size ||
        other.tgt_vocab_size != first.tgt_vocab_size) {
      throw Error(
          "ensemble members 1 and " + std::to_string(i + 1) +
          " have different shapes: vocabularies of " + std::to_string(first.src_vocab_size) + "/" +
          std::to_string(first.tgt_vocab_size) + " and " + std::to_string(other.src_vocab_size) +
          "/" + std::to_string(other.tgt_vocab_size) +
          " (source/target) tokens; members must share one tokenizer");
    }
  }
}

int64_t Ensemble::max_len() const {
  int64_t max_len = std::numeric_limits<int64_t>::max();
  for (const auto& member : members_) max_len = std::min(max_len, member->config().max_len);
  return max_len;
}

void Ensemble::set_shortlist(std::shared_ptr<const Shortlist> shortlist) {
  const int64_t vocab = members_.front()->config().tgt_vocab_size;
  if (shortlist && shortlist->tgt_vocab_size() != vocab) {
    throw Error("the shortlist is for a target vocabulary of " +
                std::to_string(shortlist->tgt_vocab_size()) + " pieces, the model has " +
                std::to_string(vocab));
  }
  shortlist_ = std::move(shortlist);
}

EnsembleState::EnsembleState(const Ensemble& models, const at::Tensor& src,
                             const std::vector<std::vector<int64_t>>& forced)
    : eval_modes_(std::make_unique<detail::EnsembleEvalModes>(models)) {
  for (size_t i = 0; i < models.size(); ++i) members_.push_back(models.member(i));
  tgt_vocab_size_ = members_.front()->config().tgt_vocab_size;
  src_mask_ = members_.front()->make_src_mask(src);  // [batch, 1, 1, src_len]
  for (auto& member : members_) {
    caches_.push_back(member->decoder->start(member->encode(src, src_mask_)));
  }
  if (models.shortlist()) {
    // Pad and bos take part in the softmax and are then set to -inf, as output_log_probs does
    // over the whole vocabulary: a shortlist of every piece scores exactly as none.
    std::vector<std::vector<int64_t>> wanted(size_t(src.size(0)), {kPadId, kBosId});
    std::vector<int64_t> all = {kPadId, kBosId};
    for (size_t row = 0; row < forced.size() && row < wanted.size(); ++row) {
      wanted[row].insert(wanted[row].end(), forced[row].begin(), forced[row].end());
      all.insert(all.end(), forced[row].begin(), forced[row].end());
    }
    const auto ids = models.shortlist()->candidates(src, all);
    TORCH_CHECK(ids.size(0) > kBosId && ids[kBosId].item<int64_t>() == kBosId,
                "shortlist candidates must hold pad, unk and bos");  // Shortlist keeps unk
    for (auto& member : members_) {
      rows_.push_back(member->decoder->output_rows(ids.to(src.device())));
    }
    blocked_ = models.shortlist()->blocked(src, ids, wanted);
    if (blocked_.defined()) blocked_ = blocked_.to(src.device());
  }
}

EnsembleState::~EnsembleState() = default;

at::Tensor EnsembleState::next_log_probs(const at::Tensor& tokens) {
  at::Tensor sum;
  for (size_t i = 0; i < members_.size(); ++i) {
    const auto hidden = members_[i]->decoder->step(tokens, caches_[i], src_mask_).hidden;
    const auto last = hidden.select(1, hidden.size(1) - 1);  // [rows, d_model]
    // With a shortlist, the softmax runs over its candidates, which start with ids 0, 1, 2
    // (pad, unk, bos): output_log_probs' pad and bos columns are the same there.
    auto logits = rows_.empty() ? members_[i]->decoder->project(last)
                                : members_[i]->decoder->project(last, rows_[i]);
    if (blocked_.defined()) {  // each sentence's own candidates: rows in groups per source
      logits.view({blocked_.size(0), -1, logits.size(-1)})
          .masked_fill_(blocked_.unsqueeze(1), -std::numeric_limits<float>::infinity());
    }
    auto log_probs = output_log_probs(logits);
    sum = sum.defined() ? sum.add_(log_probs) : log_probs;
  }
  if (members_.size() > 1) sum.div_(static_cast<double>(members_.size()));
  if (!rows_.empty()) {  // back to the whole vocabulary, -inf outside the candidates
    auto full = at::full({sum.size(0), tgt_vocab_size_}, -std::numeric_limits<float>::infinity(),
                         sum.options());
    full.index_copy_(1, rows_.front().ids, sum);
    return full;
  }
  return sum;
}

void EnsembleState::select(const at::Tensor& index, bool same_sources) {
  for (auto& cache : caches_) cache.select(index, /*self_only=*/same_sources);
  if (same_sources) return;
  const auto sources = caches_.front().source_index(index);
  src_mask_ = src_mask_.index_select(0, sources);
  if (blocked_.defined()) blocked_ = blocked_.index_select(0, sources);
}

void EnsembleState::group_rows(int64_t rows) {
  TORCH_CHECK(rows >= 1, "group_rows: ", rows, " rows per source");
  for (auto& cache : caches_) {
    TORCH_CHECK(cache.group == 1, "group_rows: the rows are grouped already");
    for (auto& layer : cache.layers) {
      if (!layer.self.defined()) continue;
      TORCH_CHECK(layer.self.key.size(0) == src_mask_.size(0),
                  "group_rows: ", layer.self.key.size(0), " rows decoded for ", src_mask_.size(0),
                  " sources");
      layer.self.key = layer.self.key.repeat_interleave(rows, 0);
      layer.self.value = layer.self.value.repeat_interleave(rows, 0);
    }
    cache.group = rows;
  }
}

at::Tensor output_log_probs(const at::Tensor& logits) {
  // float32 even under bf16 autocast: log-probs are summed over many steps.
  auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);  // [rows, vocab]
  log_probs.select(-1, kPadId).fill_(-std::numeric_limits<float>::infinity());
  log_probs.select(-1, kBosId).fill_(-std::numeric_limits<float>::infinity());
  return log_probs;
}

}  // namespace nmt
