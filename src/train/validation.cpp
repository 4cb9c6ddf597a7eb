#include "train/validation.h"

#include <chrono>

#include "core/precision.h"
#include "decode/evaluation.h"
#include "decode/translator.h"

namespace nmt {

bool improves(Metric metric, double candidate, double best) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(best)) return true;
  return metric == Metric::kBleu ? candidate > best : candidate < best;
}

ScoringOptions validation_scoring(const Config& config) {
  ScoringOptions scoring;
  scoring.tokenize = config.train.bleu_tokenize;
  scoring.target_language = config.data.tgt_lang;
  scoring.ter = false;  // the logs and the best checkpoint use BLEU and chrF only
  return scoring;
}

ValidationResult validate(Seq2Seq& model, const Tokenizer& tokenizer, const EncodedSplit& split,
                          const Config& config, const at::Device& device) {
  const auto start = std::chrono::steady_clock::now();
  ValidationResult result;
  model->eval();
  // In the training precision: bf16 greedy decoding is faster than fp32 on CPU, and it scores
  // the model as it is trained (search keeps its log-probabilities in float32).
  AutocastGuard autocast(config.train.precision, device);
  if (config.train.valid_bleu) {
    // Validation BLEU is always greedy (fast, comparable), whatever decode.* asks for.
    DecodeConfig greedy = config.decode.plain_search(1);
    greedy.max_len_offset = config.train.valid_max_len_offset;
    Translator translator(model, tokenizer, greedy, device);
    translator.set_log(nullptr);
    const auto report = evaluate_parallel(translator, ParallelText{split.src_text, split.tgt_text},
                                          validation_scoring(config));
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

}  // namespace nmt
