#include "text/markup.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace nmt {
namespace {

/// A tag's place in the target: bytes [begin, end); an empty one sits at `begin`.
struct Placement {
  size_t begin = 0;
  size_t end = 0;
  bool empty() const { return begin >= end; }
};

bool overlaps(TextSpan word, TextSpan span) {
  return word.begin < span.end && span.begin < word.end;
}

/// How many bytes of punctuation `word` of `text` has at its end (or start).
size_t punctuation_bytes(const std::string& text, TextSpan word, bool at_end) {
  size_t bytes = 0;
  if (at_end) {
    int32_t i = int32_t(word.end);
    while (i > int32_t(word.begin)) {
      int32_t before = i;
      UChar32 c = 0;
      U8_PREV(text.data(), 0, before, c);
      if (!u_ispunct(c)) break;
      bytes += size_t(i - before), i = before;
    }
  } else {
    int32_t i = int32_t(word.begin);
    while (i < int32_t(word.end)) {
      const int32_t start = i;
      UChar32 c = 0;
      U8_NEXT(text.data(), i, int32_t(word.end), c);
      if (!u_ispunct(c)) break;
      bytes += size_t(i - start);
    }
  }
  return std::min(bytes, word.size() - 1);  // never the whole word
}

class Placer {
 public:
  Placer(const TextBlock& source, const std::string& target, const WordLinks& alignment)
      : source_(source), target_(target), alignment_(alignment) {
    targets_of_.resize(alignment.src_words.size());
    for (const auto& [s, t] : alignment.links) {
      if (s < targets_of_.size() && t < alignment.tgt_words.size()) targets_of_[s].push_back(t);
    }
  }

  std::vector<Placement> place() {
    std::vector<Placement> placed(source_.tags.size());
    for (size_t k = 0; k < source_.tags.size(); ++k) {
      Placement p = aligned(source_.tags[k]);
      const int parent = source_.tags[k].parent;
      const Placement outer = parent < 0 ? Placement{0, target_.size()} : placed[size_t(parent)];
      p = clamp(p, outer);
      // Earlier siblings keep their place; this one gives way.
      for (size_t s = 0; s < k; ++s) {
        if (source_.tags[s].parent == parent) p = give_way(p, placed[s]);
      }
      placed[k] = p;
    }
    return placed;
  }

 private:
  /// The target range of the words linked to the tag's source words, or its anchor.
  Placement aligned(const InlineTag& tag) const {
    size_t begin = std::numeric_limits<size_t>::max(), end = 0;
    bool any = false;
    for (size_t s = 0; s < alignment_.src_words.size(); ++s) {
      if (tag.span.empty() || !overlaps(alignment_.src_words[s], tag.span)) continue;
      for (const size_t t : targets_of_[s]) {
        begin = std::min(begin, alignment_.tgt_words[t].begin);
        end = std::max(end, alignment_.tgt_words[t].end);
        any = true;
      }
    }
    if (!any) return {anchor(tag.span.begin), anchor(tag.span.begin)};
    // Punctuation at the edges of the target words stays outside the tag unless the tag had
    // punctuation at that edge in the source ("<b>dog</b>." -> "<b>Hund</b>.", and a full stop
    // that word order moved onto the tag's word stays out of it too).
    const auto words = text_words(source_.text, tag.span);
    if (!words.empty()) {
      const auto& last = words.back();
      if (punctuation_bytes(source_.text, last, true) == 0) {
        end -= punctuation_bytes(target_, word_ending_at(end), true);
      }
      const auto& first = words.front();
      if (punctuation_bytes(source_.text, first, false) == 0) {
        begin += punctuation_bytes(target_, word_starting_at(begin), false);
      }
    }
    return {begin, end};
  }

  TextSpan word_ending_at(size_t end) const {
    for (const auto& w : alignment_.tgt_words) {
      if (w.end == end) return w;
    }
    return {end, end};
  }
  TextSpan word_starting_at(size_t begin) const {
    for (const auto& w : alignment_.tgt_words) {
      if (w.begin == begin) return w;
    }
    return {begin, begin};
  }

  /// Where something at source byte `position` goes in the target: after the translation of the
  /// source word before it; at the start before every word, at the end after every word.
  size_t anchor(size_t position) const {
    const auto& words = alignment_.src_words;
    if (words.empty() || position <= words.front().begin) return 0;
    if (position >= words.back().end) return target_.size();
    for (size_t s = words.size(); s-- > 0;) {
      if (words[s].end > position) continue;
      size_t end = 0;
      bool any = false;
      for (const size_t t : targets_of_[s])
        end = std::max(end, alignment_.tgt_words[t].end), any = true;
      if (any) return end;
    }
    return 0;
  }

  static Placement clamp(Placement p, Placement outer) {
    if (p.empty()) {
      const size_t at = std::clamp(p.begin, outer.begin, std::max(outer.begin, outer.end));
      return {at, at};
    }
    const Placement inside{std::max(p.begin, outer.begin), std::min(p.end, outer.end)};
    if (inside.empty()) {
      const size_t at = p.begin >= outer.end ? std::max(outer.begin, outer.end) : outer.begin;
      return {at, at};
    }
    return inside;
  }

  /// `p` moved off an earlier sibling's range `other` (the sibling keeps it).
  static Placement give_way(Placement p, Placement other) {
    if (other.empty()) return p;
    if (p.empty()) {
      if (p.begin > other.begin && p.begin < other.end) return {other.end, other.end};
      return p;
    }
    if (p.end <= other.begin || p.begin >= other.end) return p;  // apart
    if (p.begin < other.begin) return {p.begin, other.begin};    // the part before it
    if (p.end > other.end) return {other.end, p.end};            // the part after it
    return {other.end, other.end};                               // inside it: after it
  }

  const TextBlock& source_;
  const std::string& target_;
  const WordLinks& alignment_;
  std::vector<std::vector<size_t>> targets_of_;
};

}  // namespace

std::vector<std::pair<size_t, size_t>> links_from_attention(
    const std::vector<std::vector<double>>& mass) {
  std::vector<std::pair<size_t, size_t>> links;
  if (mass.empty() || mass.front().empty()) return links;
  const size_t n_src = mass.front().size();
  std::vector<bool> linked(n_src, false);
  for (size_t t = 0; t < mass.size(); ++t) {
    const auto s = size_t(std::max_element(mass[t].begin(), mass[t].end()) - mass[t].begin());
    links.emplace_back(s, t);
    linked[s] = true;
  }
  for (size_t s = 0; s < n_src; ++s) {
    if (linked[s]) continue;
    size_t best = 0;
    for (size_t t = 1; t < mass.size(); ++t) best = mass[t][s] > mass[best][s] ? t : best;
    links.emplace_back(s, best);
  }
  return links;
}

TextBlock place_tags(const TextBlock& source, const std::string& target,
                     const WordLinks& alignment) {
  const auto placed = Placer(source, target, alignment).place();
  // Document order of the target: a parent before its children, siblings by position (empty
  // ones before a range that starts at the same byte), ties in source order.
  std::vector<std::vector<size_t>> children(source.tags.size() + 1);
  for (size_t k = 0; k < source.tags.size(); ++k) {
    children[size_t(source.tags[k].parent + 1)].push_back(k);
  }
  for (auto& list : children) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      if (placed[a].begin != placed[b].begin) return placed[a].begin < placed[b].begin;
      return placed[a].empty() && !placed[b].empty();
    });
  }
  TextBlock out;
  out.text = target;
  std::vector<int> new_index(source.tags.size(), -1);
  std::vector<std::pair<size_t, int>> stack;  // (tag, its new parent), depth first
  for (auto it = children[0].rbegin(); it != children[0].rend(); ++it) stack.emplace_back(*it, -1);
  while (!stack.empty()) {
    const auto [k, parent] = stack.back();
    stack.pop_back();
    InlineTag tag = source.tags[k];
    tag.span = {placed[k].begin, std::max(placed[k].begin, placed[k].end)};
    tag.parent = parent;
    new_index[k] = int(out.tags.size());
    out.tags.push_back(std::move(tag));
    const auto& kids = children[k + 1];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.emplace_back(*it, new_index[k]);
  }
  return out;
}

}  // namespace nmt
