#include "decode/evaluation.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/error.h"
#include "core/special_ids.h"
#include "decode/search_internal.h"

namespace nmt {
namespace {

/// The negative log-likelihood of each non-padding target token of a batch (float32), and the
/// batch row each belongs to.
struct TokenNll {
  at::Tensor nll;   ///< [tokens]
  at::Tensor rows;  ///< [tokens], int64
};

TokenNll token_nll(Seq2Seq model, const Batch& batch) {
  const auto hidden = model->forward_hidden(batch.src, batch.tgt_in);  // [batch, tgt_len, d]
  const auto keep = batch.tgt_out.reshape(-1).ne(kPadId).nonzero().squeeze(1);  // [tokens]
  const auto states = hidden.reshape({-1, hidden.size(2)}).index_select(0, keep);
  const auto targets = batch.tgt_out.reshape(-1).index_select(0, keep);  // [tokens]
  const auto log_probs = at::log_softmax(model->decoder->project(states).to(at::kFloat), -1);
  return {-log_probs.gather(1, targets.unsqueeze(1)).squeeze(1),
          at::div(keep, batch.tgt_out.size(1), "floor")};
}

/// token_nll of an ensemble: each token's negative log-probability averaged over the members, as
/// the searches average the log-probabilities they decode with.
TokenNll ensemble_nll(const Ensemble& models, const Batch& batch) {
  TokenNll nll = token_nll(models.member(0), batch);
  for (size_t m = 1; m < models.size(); ++m) nll.nll.add_(token_nll(models.member(m), batch).nll);
  if (models.size() > 1) nll.nll.div_(static_cast<double>(models.size()));
  return nll;
}

}  // namespace

LossStats teacher_forced_loss(const Ensemble& models, std::vector<Example> examples,
                              int64_t batch_tokens, const at::Device& device, StopCheck stop) {
  torch::NoGradGuard no_grad;
  const detail::EnsembleEvalModes eval_modes(models);
  const auto limit = static_cast<size_t>(models.max_len() - 1);  // + eos / bos
  for (auto& example : examples) {
    if (example.src.size() > limit) example.src.resize(limit);
    if (example.tgt.size() > limit) example.tgt.resize(limit);
  }
  LossStats stats;
  const PairStore store = PairStore::from_examples(examples);
  const PairsView pairs(store);
  for (const auto& indices : make_sorted_batches(pairs, batch_tokens)) {
    if (stop != nullptr && stop()) break;
    const Batch batch = collate(pairs, indices).to(device);
    stats.loss_sum += ensemble_nll(models, batch).nll.sum().item<double>();
    stats.tokens += batch.tgt_tokens;
  }
  return stats;
}

std::vector<Example> encode_pairs(const Tokenizer& tokenizer, const std::vector<std::string>& src,
                                  const std::vector<std::string>& tgt, const LanguageTags& tags,
                                  const std::string& tgt_lang) {
  TORCH_CHECK(src.size() == tgt.size(), "encode_pairs: ", src.size(), " sources, ", tgt.size(),
              " targets");
  std::vector<Example> examples;
  for (size_t i = 0; i < src.size(); ++i) {
    examples.push_back({tokenizer.encode_src(src[i]), tokenizer.encode_tgt(tgt[i])});
    tags.apply(examples.back(), tgt_lang);
  }
  return examples;
}

std::vector<SentenceScore> teacher_forced_scores(const Ensemble& models,
                                                 const std::vector<Example>& examples,
                                                 int64_t batch_tokens, const at::Device& device,
                                                 StopCheck stop) {
  torch::NoGradGuard no_grad;
  const detail::EnsembleEvalModes eval_modes(models);
  const auto limit = static_cast<size_t>(models.max_len() - 1);  // + eos / bos
  for (size_t i = 0; i < examples.size(); ++i) {
    const size_t longest = std::max(examples[i].src.size(), examples[i].tgt.size());
    if (longest > limit) {
      throw Error("pair " + std::to_string(i + 1) + ": " +
                  (examples[i].src.size() > limit ? "source" : "target") + " has " +
                  std::to_string(longest) + " pieces, more than this model reads (" +
                  std::to_string(limit) + ", model.max_len - 1); drop or split the line");
    }
  }
  std::vector<SentenceScore> scores(examples.size());
  const PairStore store = PairStore::from_examples(examples);
  const PairsView pairs(store);
  for (const auto& indices : make_sorted_batches(pairs, batch_tokens)) {
    if (stop != nullptr && stop()) break;
    const Batch batch = collate(pairs, indices).to(device);
    const TokenNll nll = ensemble_nll(models, batch);
    const auto rows = nll.rows.cpu();
    const auto per_row = at::zeros({static_cast<int64_t>(indices.size())}, at::kDouble)
                             .index_add_(0, rows, nll.nll.cpu().to(at::kDouble));
    const auto counts = at::bincount(rows, {}, static_cast<int64_t>(indices.size()));
    const auto sums = per_row.accessor<double, 1>();
    const auto tokens = counts.accessor<int64_t, 1>();
    for (size_t r = 0; r < indices.size(); ++r) {
      scores[indices[r]] = {-sums[int64_t(r)], tokens[int64_t(r)]};
    }
  }
  return scores;
}

double EvaluationReport::sentences_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(hypotheses.size()) / decode_seconds : 0.0;
}

double EvaluationReport::tokens_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(target_tokens) / decode_seconds : 0.0;
}

EvaluationReport evaluate_parallel(Translator& translator, const ParallelText& text,
                                   const ScoringOptions& scoring, const TranslateLines& translate) {
  EvaluationReport report;
  auto examples = encode_pairs(translator.tokenizer(), text.src, text.tgt,
                               translator.language_tags(), translator.target_language());
  report.loss =
      teacher_forced_loss(translator.models(), std::move(examples),
                          translator.config().batch_tokens, translator.device(), translator.stop());
  report.interrupted = translator.stop() != nullptr && translator.stop()();
  if (report.interrupted) return report;
  const auto start = std::chrono::steady_clock::now();
  const auto results = translate(text.src);
  report.decode_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& result : results) {
    if (result.interrupted) {
      report.interrupted = true;
      return report;
    }
    if (!result.ok()) throw Error(*result.error);
    report.hypotheses.push_back(result.best());
    if (!result.nbest.empty()) {
      report.target_tokens += static_cast<int64_t>(result.nbest.front().tokens.size());
    }
  }
  report.scores = score_hypotheses(report.hypotheses, text.tgt, scoring);
  return report;
}

}  // namespace nmt
