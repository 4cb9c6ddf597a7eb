#include "decode/attention_map.h"

#include <torch/types.h>
#include <torch/utils.h>

#include "core/error.h"
#include "core/special_ids.h"
#include "data/corpus.h"
#include "decode/translator.h"

namespace nmt {
namespace {

/// Throws unless `min` <= `index` < `count`, naming the index, the model's count of `what`
/// and the valid range.
void check_index(const std::string& what, int64_t index, int64_t min, int64_t count,
                 const std::string& meaning) {
  if (index < min || index >= count) {
    throw Error("attention " + what + " " + std::to_string(index) + " is out of range: the " +
                "model has " + std::to_string(count) + " " + what + "s (valid: " +
                std::to_string(min) + ".." + std::to_string(count - 1) + "; " + meaning + ")");
  }
}

/// Teacher-forced cross-attention weights [tgt_len, src_len] (CPU, float32) of one pair of id
/// sequences: src ids + eos, bos + target ids.
at::Tensor cross_attention(const TeacherForcing& pass, const std::vector<int64_t>& src_ids,
                           const std::vector<int64_t>& tgt_ids, const AttentionOptions& options) {
  torch::NoGradGuard no_grad;
  const auto to_device = [&](const std::vector<int64_t>& ids) {
    return at::tensor(at::ArrayRef<int64_t>(ids), at::kLong).unsqueeze(0).to(pass.device);
  };
  const auto src = to_device(src_ids);  // [1, src_len]
  const auto tgt = to_device(tgt_ids);  // [1, tgt_len]
  auto model = pass.model;              // a handle: the module is only read
  const auto src_mask = model->make_src_mask(src);
  const auto memory = model->encode(src, src_mask);
  const auto out = model->decoder->hidden(tgt, memory, model->make_tgt_mask(tgt), src_mask,
                                          /*need_weights=*/true);
  // AttentionOptions::validate has checked the indices against the model's config.
  const auto layers = static_cast<int64_t>(out.attention.size());
  const auto& layer = out.attention[options.layer < 0 ? layers + options.layer : options.layer];
  at::Tensor weights = layer[0];  // [heads, tgt_len, src_len]
  weights = options.head == -1 ? weights.mean(0) : weights[options.head];
  return weights.to(at::kCPU, at::kFloat).contiguous();  // [tgt_len, src_len]
}

}  // namespace

void AttentionOptions::validate(const ModelConfig& model) const {
  check_index("layer", layer, -model.decoder_layers, model.decoder_layers,
              "negative counts from the end, -1 = the last decoder layer");
  check_index("head", head, -1, model.n_heads, "-1 = the mean over heads");
}

AttentionMap attention_map(const TeacherForcing& pass, const std::string& source,
                           const std::vector<int64_t>& target, const AttentionOptions& options) {
  if (!valid_utf8(source)) throw Error("attention: the source is not valid UTF-8");
  options.validate(pass.model->config());
  auto src_ids = encode_line(pass.tokenizer, pass.model, source, 1).ids;  // cut as translated
  AttentionMap map;
  map.src_pieces = pass.tokenizer.src_pieces(source);
  map.src_pieces.resize(src_ids.size());    // truncated like the ids
  std::vector<int64_t> tgt_ids = {kBosId};  // bos + target predicts target + eos
  // A multilingual model's tag, where translation puts it (a row or a column of its own).
  if (pass.tags.active()) {
    const auto limit = static_cast<size_t>(pass.model->config().max_len - 1);
    if (const int64_t tag = pass.tags.source_tag(pass.tgt_lang); tag >= 0) {
      if (src_ids.size() >= limit) src_ids.resize(limit - 1), map.src_pieces.resize(limit - 1);
      src_ids.insert(src_ids.begin(), tag);
      map.src_pieces.insert(map.src_pieces.begin(), language_tag(pass.tgt_lang));
    }
    if (const int64_t tag = pass.tags.target_tag(pass.tgt_lang); tag >= 0) {
      tgt_ids.push_back(tag);
      map.tgt_pieces.push_back(language_tag(pass.tgt_lang));
    }
  }
  src_ids.push_back(kEosId);
  tgt_ids.insert(tgt_ids.end(), target.begin(), target.end());
  map.weights = cross_attention(pass, src_ids, tgt_ids, options);  // [tgt_len, src_len]
  map.src_pieces.push_back("</s>");
  for (auto& piece : pass.tokenizer.tgt_pieces(target)) map.tgt_pieces.push_back(std::move(piece));
  map.tgt_pieces.push_back("</s>");
  return map;
}

}  // namespace nmt
