#include "text/chunking.h"

#include <unicode/utf8.h>

#include <algorithm>
#include <string_view>

#include "core/error.h"

namespace nmt {
namespace {

/// Whether a word ends a clause: its last character is , ; : or a dash (en, em, figure dash).
bool ends_clause(const std::string& text, TextSpan word) {
  const std::string_view w(text.data() + word.begin, word.size());
  for (const std::string_view mark : {",", ";", ":", "\u2013", "\u2014", "\u2012", "\u3001"}) {
    if (w.size() >= mark.size() && w.substr(w.size() - mark.size()) == mark) return true;
  }
  return false;
}

/// SentencePiece's longest piece by default (max_piece_length): a part of `limit` pieces spans
/// at most this many code points per piece.
constexpr size_t kLongestPiece = 16;

/// A word too long alone split at code points into parts of at most `limit` pieces: each part
/// the longest prefix of the rest that fits, found by bisection (a prefix's piece count grows
/// with its length), so a long word costs O(log) counts of short texts per part.
void split_word(const std::string& text, TextSpan word, size_t limit, const PieceCounter& count,
                std::vector<TextSpan>& parts) {
  std::vector<size_t> bounds;  // the byte offset after each code point
  for (int32_t index = static_cast<int32_t>(word.begin); index < static_cast<int32_t>(word.end);) {
    UChar32 c = 0;
    U8_NEXT(text.data(), index, static_cast<int32_t>(word.end), c);
    bounds.push_back(static_cast<size_t>(index));
  }
  size_t first = 0;  // index into bounds of the part's first code point
  size_t start = word.begin;
  while (first < bounds.size()) {
    size_t lo = first;  // bounds[lo] fits (one code point always goes in)
    size_t hi = std::min(bounds.size() - 1, first + limit * kLongestPiece);
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (count(text.substr(start, bounds[mid] - start)) <= limit) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    parts.push_back({start, bounds[lo]});
    start = bounds[lo];
    first = lo + 1;
  }
}

/// Packs consecutive units (each of `cost` pieces) into parts of at most `limit` pieces; a unit
/// above the limit alone becomes its own group. Returns the index of each group's first unit.
std::vector<size_t> pack(const std::vector<size_t>& cost, size_t limit) {
  std::vector<size_t> starts;
  size_t used = 0;
  for (size_t i = 0; i < cost.size(); ++i) {
    if (starts.empty() || used + cost[i] > limit) {
      starts.push_back(i);
      used = 0;
    }
    used += cost[i];
  }
  return starts;
}

}  // namespace

std::vector<TextSpan> split_to_fit(const std::string& text, TextSpan span, size_t limit,
                                   const PieceCounter& count) {
  if (limit == 0) throw Error("split_to_fit: the limit must be at least 1 piece");
  const auto words = text_words(text, span);
  if (words.empty()) return {};
  const TextSpan whole{words.front().begin, words.back().end};
  if (count(text.substr(whole.begin, whole.size())) <= limit) return {whole};  // the usual case
  std::vector<size_t> word_cost;
  size_t total = 0;
  for (const auto& word : words) {
    word_cost.push_back(count(text.substr(word.begin, word.size())));
    total += word_cost.back();
  }
  if (total <= limit) return {whole};
  // Clauses: runs of words, each ending at clause punctuation (or the span's end).
  std::vector<size_t> clause_first = {0};
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (ends_clause(text, words[i])) clause_first.push_back(i + 1);
  }
  std::vector<size_t> clause_cost(clause_first.size(), 0);
  for (size_t c = 0; c < clause_first.size(); ++c) {
    const size_t last = c + 1 < clause_first.size() ? clause_first[c + 1] : words.size();
    for (size_t i = clause_first[c]; i < last; ++i) clause_cost[c] += word_cost[i];
  }
  std::vector<TextSpan> parts;
  const auto groups = pack(clause_cost, limit);
  for (size_t g = 0; g < groups.size(); ++g) {
    const size_t first_word = clause_first[groups[g]];
    const size_t end_clause = g + 1 < groups.size() ? groups[g + 1] : clause_first.size();
    const size_t end_word =
        end_clause < clause_first.size() ? clause_first[end_clause] : words.size();
    size_t cost = 0;
    for (size_t c = groups[g]; c < end_clause; ++c) cost += clause_cost[c];
    if (cost <= limit) {
      parts.push_back({words[first_word].begin, words[end_word - 1].end});
      continue;
    }
    // One clause too long: its words, packed; a word too long alone: its code points.
    const std::vector<size_t> costs(word_cost.begin() + long(first_word),
                                    word_cost.begin() + long(end_word));
    const auto word_groups = pack(costs, limit);
    for (size_t w = 0; w < word_groups.size(); ++w) {
      const size_t a = first_word + word_groups[w];
      const size_t b = w + 1 < word_groups.size() ? first_word + word_groups[w + 1] : end_word;
      if (b - a == 1 && word_cost[a] > limit) {
        split_word(text, words[a], limit, count, parts);
      } else {
        parts.push_back({words[a].begin, words[b - 1].end});
      }
    }
  }
  return parts;
}

}  // namespace nmt
