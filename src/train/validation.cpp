#include "train/validation.h"

#include <chrono>

#include "core/precision.h"
#include "decode/evaluation.h"
#include "decode/translator.h"
#include "model/quantize.h"

namespace nmt {

bool improves(Metric metric, double candidate, double best) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(best)) return true;
  return metric == Metric::kBleu ? candidate > best : candidate < best;
}

ScoringOptions validation_scoring(const Config& config, const std::string& tgt_lang) {
  ScoringOptions scoring;
  scoring.tokenize = config.train.bleu_tokenize;
  scoring.target_language = tgt_lang.empty() ? config.data.tgt_lang : tgt_lang;
  scoring.ter = false;  // the logs and the best checkpoint use BLEU and chrF only
  return scoring;
}

ValidationResult validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                          const Config& config, const at::Device& device,
                          const std::string& tgt_lang) {
  const std::string target = tgt_lang.empty() ? config.data.tgt_lang : tgt_lang;
  const auto start = std::chrono::steady_clock::now();
  ValidationResult result;
  model->eval();
  // In the training precision: bf16 greedy decoding is faster than fp32 on CPU, and it scores
  // the model as it is trained (search keeps its log-probabilities in float32).
  AutocastGuard autocast(config.train.precision, device);
  // In float32 on a CPU, the weights packed for decoding until this validation ends
  // (model/quantize.h; the next training step computes with the updated weights again), and
  // one single-threaded decoding worker per thread, as nmt translate decodes.
  const PackedWhileDecoding packed(model,
                                   device.is_cpu() && !InheritedAutocast::State::current().cpu);
  if (config.train.valid_bleu) {
    // Validation BLEU is always greedy (fast, comparable), whatever decode.* asks for.
    DecodeConfig greedy = config.decode.plain_search(1);
    greedy.max_len_offset = config.train.valid_max_len_offset;
    Translator translator(model, tokenizer, greedy, device);
    translator.set_log(nullptr);
    if (packed.packed()) translator.set_workers(at::get_num_threads());
    translator.set_language(LanguageTags(config.data, tokenizer), target);
    const auto report = evaluate_parallel(translator, ParallelText{split.src_text, split.tgt_text},
                                          validation_scoring(config, target));
    result.loss = report.loss.loss();
    result.bleu = report.scores.bleu.score;
    result.chrf = report.scores.chrf.score;
  } else {
    result.loss =
        teacher_forced_loss(model, split.examples, config.decode.batch_tokens, device).loss();
  }
  result.perplexity = std::exp(result.loss);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

ValidationSummary validate_sets(Seq2Seq& model, const Tokenizer& tokenizer,
                                const std::vector<ValidationSet>& sets, const Config& config,
                                const at::Device& device) {
  ValidationSummary summary;
  for (const auto& set : sets) {
    summary.each.push_back(validate(model, tokenizer, set, config, device));
  }
  if (summary.each.size() == 1) {
    summary.mean = summary.each.front();
    return summary;
  }
  ValidationResult& mean = summary.mean;
  mean.loss = mean.bleu = mean.chrf = 0.0;
  const auto n = static_cast<double>(summary.each.size());
  for (const auto& one : summary.each) {
    mean.loss += one.loss / n;
    mean.bleu += one.bleu / n;  // NaN (no BLEU) stays NaN
    mean.chrf += one.chrf / n;
    mean.seconds += one.seconds;
  }
  mean.perplexity = std::exp(mean.loss);
  return summary;
}

}  // namespace nmt
