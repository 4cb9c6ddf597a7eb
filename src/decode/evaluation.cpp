#include "decode/evaluation.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/special_ids.h"
#include "decode/search_internal.h"

namespace nmt {
namespace {

/// Summed NLL of one batch's non-padding target tokens.
double batch_nll(Seq2Seq& model, const Batch& batch) {
  const auto hidden = model->forward_hidden(batch.src, batch.tgt_in);  // [batch, tgt_len, d]
  const auto keep = batch.tgt_out.reshape(-1).ne(kPadId).nonzero().squeeze(1);  // [tokens]
  const auto states = hidden.reshape({-1, hidden.size(2)}).index_select(0, keep);
  const auto targets = batch.tgt_out.reshape(-1).index_select(0, keep);  // [tokens]
  const auto log_probs = at::log_softmax(model->decoder->project(states).to(at::kFloat), -1);
  return -log_probs.gather(1, targets.unsqueeze(1)).sum().item<double>();
}

}  // namespace

LossStats teacher_forced_loss(Seq2Seq& model, std::vector<Example> examples, int64_t batch_tokens,
                              const at::Device& device, StopCheck stop) {
  torch::NoGradGuard no_grad;
  detail::EvalModeGuard eval_mode(*model);
  const auto limit = static_cast<size_t>(model->config().max_len - 1);  // + eos / bos
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
    stats.loss_sum += batch_nll(model, batch);
    stats.tokens += batch.tgt_tokens;
  }
  return stats;
}

double EvaluationReport::sentences_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(hypotheses.size()) / decode_seconds : 0.0;
}

double EvaluationReport::tokens_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(target_tokens) / decode_seconds : 0.0;
}

EvaluationReport evaluate_parallel(Translator& translator, const ParallelText& text,
                                   bool lowercase) {
  EvaluationReport report;
  std::vector<Example> examples;
  for (size_t i = 0; i < text.size(); ++i) {
    examples.push_back({translator.tokenizer().encode_src(text.src[i]),
                        translator.tokenizer().encode_tgt(text.tgt[i])});
  }
  report.loss =
      teacher_forced_loss(translator.model(), std::move(examples), translator.config().batch_tokens,
                          translator.device(), translator.stop());
  report.interrupted = translator.stop() != nullptr && translator.stop()();
  if (report.interrupted) return report;
  const auto start = std::chrono::steady_clock::now();
  const auto results = translator.translate(text.src);
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
  report.bleu = corpus_bleu(report.hypotheses, text.tgt, lowercase);
  report.bleu_lowercase = corpus_bleu(report.hypotheses, text.tgt, /*lowercase=*/true);
  report.chrf = corpus_chrf(report.hypotheses, text.tgt, lowercase);
  return report;
}

}  // namespace nmt
