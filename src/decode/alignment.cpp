#include "decode/alignment.h"

#include <algorithm>

#include "core/error.h"

namespace nmt {

std::vector<int64_t> piece_words(const std::vector<std::string>& pieces) {
  static const std::string kWordStart = "\xE2\x96\x81";  // U+2581, SentencePiece's space mark
  std::vector<int64_t> words;
  int64_t word = -1;
  for (const auto& piece : pieces) {
    // eos, and a multilingual model's "<2xx>" tag (attention_map), belong to no word.
    const bool tag = piece.size() > 3 && piece.compare(0, 2, "<2") == 0 && piece.back() == '>';
    if (piece == "</s>" || tag) {
      words.push_back(-1);
      continue;
    }
    if (word < 0 || piece.compare(0, kWordStart.size(), kWordStart) == 0) ++word;
    words.push_back(word);
  }
  return words;
}

std::vector<std::vector<double>> word_attention(const AttentionMap& map) {
  const auto src_words = piece_words(map.src_pieces);
  const auto tgt_words = piece_words(map.tgt_pieces);
  const at::Tensor weights = map.weights.to(at::kCPU, at::kDouble).contiguous();
  if (weights.dim() != 2 || weights.size(0) != int64_t(tgt_words.size()) ||
      weights.size(1) != int64_t(src_words.size())) {
    throw Error("align_words: the attention is not [target pieces, source pieces]");
  }
  const int64_t n_src =
      src_words.empty() ? 0 : *std::max_element(src_words.begin(), src_words.end()) + 1;
  const int64_t n_tgt =
      tgt_words.empty() ? 0 : *std::max_element(tgt_words.begin(), tgt_words.end()) + 1;
  if (n_src <= 0 || n_tgt <= 0) return {};
  // mass[j][i]: attention of target word j's pieces on source word i's pieces
  std::vector<std::vector<double>> mass(size_t(n_tgt), std::vector<double>(size_t(n_src), 0.0));
  const double* w = weights.data_ptr<double>();
  for (size_t r = 0; r < tgt_words.size(); ++r) {
    if (tgt_words[r] < 0) continue;
    for (size_t c = 0; c < src_words.size(); ++c) {
      if (src_words[c] < 0) continue;
      mass[size_t(tgt_words[r])][size_t(src_words[c])] += w[r * src_words.size() + c];
    }
  }
  return mass;
}

std::vector<std::pair<int64_t, int64_t>> align_words(const AttentionMap& map) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const auto mass = word_attention(map);
  for (size_t j = 0; j < mass.size(); ++j) {
    const auto& row = mass[j];
    pairs.emplace_back(std::max_element(row.begin(), row.end()) - row.begin(), int64_t(j));
  }
  return pairs;
}

std::string pharaoh(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::string text;
  for (const auto& [i, j] : pairs) {
    if (!text.empty()) text += ' ';
    text += std::to_string(i) + "-" + std::to_string(j);
  }
  return text;
}

}  // namespace nmt
