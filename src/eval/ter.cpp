// TER as Tercom (Snover et al. 2006) and sacreBLEU 2.x compute it. The edit distance is
// Levenshtein's over words, searched only in a band around the length-scaled diagonal; shifts
// are found greedily: of the shifts that move a wrongly placed hypothesis phrase next to where
// the reference has it, the one that lowers the edit distance most is applied, and the search
// repeats until no shift helps. Ties are broken as Tercom breaks them (the longer phrase, then
// the earlier one, then the earlier destination), and the limits are Tercom's, so the counts
// match sacreBLEU's segment by segment.

#include "eval/ter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "core/error.h"
#include "eval/signature.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

constexpr int kMaxShiftSize = 10;          // words moved by one shift
constexpr int kMaxShiftDistance = 50;      // |reference position - hypothesis position|
constexpr int kBeamWidth = 25;             // band half-width of the edit distance
constexpr int kMaxShiftCandidates = 1000;  // candidate shifts evaluated per sentence
constexpr int64_t kInfinity = 10'000'000'000'000'000LL;

using Words = std::vector<std::string>;

/// An edit, as the distance matrix records the step into a cell: a match, a substitution, a
/// hypothesis word deleted, a reference word inserted; kNone for a cell outside the band.
enum class Op : char { kMatch = ' ', kSubstitute = 's', kDelete = 'd', kInsert = 'i', kNone = 'x' };

struct Cell {
  int64_t cost = kInfinity;
  Op op = Op::kNone;
};

struct Distance {
  int64_t cost = 0;
  std::vector<Op> trace;  ///< from the first words to the last
};

/// Levenshtein distance from `hyp` to `ref` (unit costs) over the band Tercom searches, and the
/// edits of one cheapest path. Among equal costs a cell prefers match/substitution, then
/// deletion, then insertion (sacreBLEU's order, which mirrors Tercom's once the trace is
/// flipped).
Distance edit_distance(const Words& hyp, const Words& ref) {
  const size_t rows = hyp.size(), cols = ref.size();
  std::vector<std::vector<Cell>> dist(rows + 1, std::vector<Cell>(cols + 1));
  for (size_t j = 0; j <= cols; ++j) dist[0][j] = {static_cast<int64_t>(j), Op::kInsert};
  const double length_ratio = hyp.empty() ? 1.0 : static_cast<double>(cols) / rows;
  // A very uneven pair would leave consecutive bands without overlap: widen the band.
  const int64_t beam = kBeamWidth < length_ratio / 2
                           ? static_cast<int64_t>(std::ceil(length_ratio / 2 + kBeamWidth))
                           : kBeamWidth;
  for (size_t i = 1; i <= rows; ++i) {
    const auto diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * length_ratio));
    const auto first = static_cast<size_t>(std::max<int64_t>(0, diagonal - beam));
    size_t end =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(cols) + 1, diagonal + beam));
    if (i == rows) end = cols + 1;
    for (size_t j = first; j < end; ++j) {
      Cell& cell = dist[i][j];
      if (j == 0) {
        cell = {dist[i - 1][0].cost + 1, Op::kDelete};
        continue;
      }
      const bool same = hyp[i - 1] == ref[j - 1];
      const Cell options[] = {
          {dist[i - 1][j - 1].cost + (same ? 0 : 1), same ? Op::kMatch : Op::kSubstitute},
          {dist[i - 1][j].cost + 1, Op::kDelete},
          {dist[i][j - 1].cost + 1, Op::kInsert}};
      for (const Cell& option : options) {
        if (cell.cost > option.cost) cell = option;
      }
    }
  }
  Distance result{dist[rows][cols].cost, {}};
  size_t i = rows, j = cols;
  while (i > 0 || j > 0) {
    const Op op = dist[i][j].op;
    result.trace.push_back(op);
    if (op == Op::kMatch || op == Op::kSubstitute) {
      --i;
      --j;
    } else if (op == Op::kInsert) {
      --j;
    } else if (op == Op::kDelete) {
      --i;
    } else {
      throw Error("TER: the edit distance band left a cell unreached (an internal error)");
    }
  }
  std::reverse(result.trace.begin(), result.trace.end());
  return result;
}

/// Where each reference word sits in the hypothesis, and which words of each side are in error,
/// read from the edits (seen from the reference: a deleted hypothesis word is one the reference
/// lacks, an inserted reference word one the hypothesis lacks).
struct Alignment {
  std::vector<int64_t> hyp_of_ref;  ///< hypothesis position aligned to each reference word
  std::vector<int> ref_error;       ///< 1 where a reference word is not matched
  std::vector<int> hyp_error;       ///< 1 where a hypothesis word is not matched
};

Alignment align(const std::vector<Op>& trace) {
  Alignment a;
  int64_t hyp_pos = -1;
  for (const Op op : trace) {
    switch (op) {
      case Op::kMatch:
      case Op::kSubstitute: {
        const int error = op == Op::kSubstitute ? 1 : 0;
        a.hyp_of_ref.push_back(++hyp_pos);
        a.hyp_error.push_back(error);
        a.ref_error.push_back(error);
        break;
      }
      case Op::kDelete:  // a hypothesis word with no reference counterpart
        ++hyp_pos;
        a.hyp_error.push_back(1);
        break;
      case Op::kInsert:  // a reference word with no hypothesis counterpart
        a.hyp_of_ref.push_back(hyp_pos);
        a.ref_error.push_back(1);
        break;
      case Op::kNone:
        break;
    }
  }
  return a;
}

/// words[begin, end) with Python's slice clamping.
void append_slice(const Words& words, size_t begin, size_t end, Words& out) {
  end = std::min(end, words.size());
  for (size_t k = begin; k < end; ++k) out.push_back(words[k]);
}

/// `length` words from `start` moved to before position `target` (sacreBLEU inserts before the
/// index where Tercom inserts after it; the candidates are shifted by one to match).
Words perform_shift(const Words& words, size_t start, size_t length, size_t target) {
  Words out;
  out.reserve(words.size());
  if (target < start) {
    append_slice(words, 0, target, out);
    append_slice(words, start, start + length, out);
    append_slice(words, target, start, out);
    append_slice(words, start + length, words.size(), out);
  } else if (target > start + length) {
    append_slice(words, 0, start, out);
    append_slice(words, start + length, target, out);
    append_slice(words, start, start + length, out);
    append_slice(words, target, words.size(), out);
  } else {
    append_slice(words, 0, start, out);
    append_slice(words, start + length, length + target, out);
    append_slice(words, start, start + length, out);
    append_slice(words, length + target, words.size(), out);
  }
  return out;
}

struct Shift {
  int64_t gain = 0;  ///< edit distance saved
  size_t length = 0;
  size_t start = 0;
  size_t target = 0;
  Words words;
  /// Tercom's ranking: the larger gain, then the longer phrase, the earlier phrase, the earlier
  /// destination.
  bool better_than(const Shift& other) const {
    if (gain != other.gain) return gain > other.gain;
    if (length != other.length) return length > other.length;
    if (start != other.start) return start < other.start;
    return target < other.target;
  }
};

/// The best shift of `hyp` towards `ref`, if any; `checked` counts the candidates evaluated.
std::optional<Shift> best_shift(const Words& hyp, const Words& ref, int& checked) {
  const Distance before = edit_distance(hyp, ref);
  const Alignment a = align(before.trace);
  std::optional<Shift> best;
  const size_t n_hyp = hyp.size(), n_ref = ref.size();
  for (size_t start_h = 0; start_h < n_hyp; ++start_h) {
    for (size_t start_r = 0; start_r < n_ref; ++start_r) {
      if (std::abs(static_cast<int64_t>(start_r) - static_cast<int64_t>(start_h)) >
          kMaxShiftDistance) {
        continue;
      }
      // Every common phrase starting here, the shortest first (up to kMaxShiftSize words).
      for (size_t length = 1;
           length <= kMaxShiftSize && start_h + length <= n_hyp && start_r + length <= n_ref &&
           hyp[start_h + length - 1] == ref[start_r + length - 1];
           ++length) {
        // Shift only a phrase the hypothesis has wrong, to a place where the reference is not
        // matched, and never into itself.
        int hyp_errors = 0, ref_errors = 0;
        for (size_t k = start_h; k < start_h + length; ++k) hyp_errors += a.hyp_error[k];
        for (size_t k = start_r; k < start_r + length; ++k) ref_errors += a.ref_error[k];
        if (hyp_errors == 0 || ref_errors == 0) continue;
        const int64_t aligned = a.hyp_of_ref[start_r];
        if (static_cast<int64_t>(start_h) <= aligned &&
            aligned < static_cast<int64_t>(start_h + length)) {
          continue;
        }
        int64_t previous = -1;
        for (int64_t offset = -1; offset < static_cast<int64_t>(length); ++offset) {
          const int64_t r = static_cast<int64_t>(start_r) + offset;
          int64_t target = 0;  // r == -1: before the first word
          if (r >= 0) {
            if (r >= static_cast<int64_t>(a.hyp_of_ref.size())) break;
            target = a.hyp_of_ref[static_cast<size_t>(r)] + 1;
          }
          if (target == previous) continue;
          previous = target;
          Shift candidate;
          candidate.words = perform_shift(hyp, start_h, length, static_cast<size_t>(target));
          candidate.gain = before.cost - edit_distance(candidate.words, ref).cost;
          candidate.length = length;
          candidate.start = start_h;
          candidate.target = static_cast<size_t>(target);
          ++checked;
          if (!best || candidate.better_than(*best)) best = std::move(candidate);
        }
        if (checked >= kMaxShiftCandidates) return best;
      }
    }
  }
  return best;
}

/// sacreBLEU's TercomTokenizer with its defaults (case-insensitive, not normalised, punctuation
/// kept) after the segment's rstrip: lowercase and split at whitespace.
Words ter_words(const std::string& line) {
  return split_unicode_whitespace(unicode_lower(rstrip_unicode_whitespace(line)));
}

}  // namespace

long long translation_edits(const Words& hypothesis, const Words& reference) {
  if (reference.empty()) return static_cast<long long>(hypothesis.size());
  Words current = hypothesis;
  long long shifts = 0;
  int checked = 0;
  while (true) {
    std::optional<Shift> shift = best_shift(current, reference, checked);
    // Tercom's budget: once spent, the last round's best shift is not applied.
    if (checked >= kMaxShiftCandidates || !shift || shift->gain <= 0) break;
    ++shifts;
    current = std::move(shift->words);
  }
  return shifts + edit_distance(current, reference).cost;
}

std::string TerScore::to_string() const {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "TER = %.2f", score);
  return buffer;
}

TerScore corpus_ter(const std::vector<std::string>& hypotheses,
                    const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size()) {
    throw Error("corpus_ter: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                std::to_string(references.size()) +
                " references; each hypothesis needs exactly one reference line");
  }
  TerScore result;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const Words ref = ter_words(references[i]);
    result.edits += translation_edits(ter_words(hypotheses[i]), ref);
    result.ref_words += static_cast<long long>(ref.size());
  }
  if (result.ref_words > 0) {
    result.score =
        100.0 * static_cast<double>(result.edits) / static_cast<double>(result.ref_words);
  } else {
    result.score = result.edits > 0 ? 100.0 : 0.0;
  }
  result.signature =
      "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:" + metric_signature_version();
  return result;
}

}  // namespace nmt
