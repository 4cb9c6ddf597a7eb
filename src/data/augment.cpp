#include "data/augment.h"

#include <unicode/uchar.h>

#include <vector>

#include "core/case_mapping.h"
#include "core/utf8.h"
#include "data/corpus.h"

namespace nmt {
namespace {

/// A draw in [0, 1) from the top 53 bits (the same on every standard library, unlike
/// std::uniform_real_distribution).
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

bool final_punctuation(char32_t c) {
  return u_hasBinaryProperty(UChar32(c), UCHAR_S_TERM) ||
         c == 0x2026;  // … is not Sentence_Terminal
}

bool space(char32_t c) { return u_isUWhiteSpace(UChar32(c)); }

bool letter(char32_t c) { return u_isalpha(UChar32(c)); }

}  // namespace

std::string drop_final_punctuation(const std::string& text) {
  std::u32string points = utf8_decode(text);
  size_t end = points.size();
  while (end > 0 && space(points[end - 1])) --end;
  const size_t before = end;
  while (end > 0 && final_punctuation(points[end - 1])) --end;
  if (end == before) return text;
  while (end > 0 && space(points[end - 1])) --end;
  points.resize(end);
  return utf8_encode(points);
}

int64_t typos_for(size_t characters) {
  return characters == 0 ? 0 : 1 + int64_t((characters - 1) / 40);
}

std::string add_typos(const std::string& text, int64_t count, std::mt19937_64& rng) {
  std::u32string points = utf8_decode(text);
  for (int64_t t = 0; t < count; ++t) {
    std::vector<size_t> letters;
    for (size_t i = 0; i < points.size(); ++i) {
      if (letter(points[i])) letters.push_back(i);
    }
    if (letters.empty()) break;
    const size_t at = letters[rng() % letters.size()];
    switch (rng() % 4) {
      case 0:  // swapped with the next letter; a word's last letter swaps with the one before
        if (at + 1 < points.size() && letter(points[at + 1]) && points[at + 1] != points[at]) {
          std::swap(points[at], points[at + 1]);
        } else if (at > 0 && letter(points[at - 1]) && points[at - 1] != points[at]) {
          std::swap(points[at - 1], points[at]);
        } else {
          points.insert(points.begin() + std::ptrdiff_t(at), points[at]);  // no letter to swap with
        }
        break;
      case 1:  // dropped, unless it is the sentence's last letter
        if (letters.size() > 1) {
          points.erase(points.begin() + std::ptrdiff_t(at));
        } else {
          points.insert(points.begin() + std::ptrdiff_t(at), points[at]);
        }
        break;
      case 2:  // doubled
        points.insert(points.begin() + std::ptrdiff_t(at), points[at]);
        break;
      default: {  // replaced by another letter of the sentence (the same script, mostly)
        std::u32string others;
        for (const size_t i : letters) {
          if (points[i] != points[at]) others.push_back(points[i]);
        }
        if (others.empty()) {
          points.insert(points.begin() + std::ptrdiff_t(at), points[at]);
        } else {
          points[at] = others[rng() % others.size()];
        }
        break;
      }
    }
  }
  return utf8_encode(points);
}

bool augment_pair(const AugmentConfig& config, const std::string& src_lang,
                  const std::string& tgt_lang, std::mt19937_64& rng, std::string& src,
                  std::string& tgt, AugmentCounts& counts) {
  const double casing = unit(rng), punct = unit(rng), typo = unit(rng);
  std::mt19937_64 typo_rng(rng());
  ++counts.pairs;
  bool changed = false;
  if (casing < config.upper + config.title) {
    const bool upper = casing < config.upper;
    std::string cased_src = upper ? upper_case(src, src_lang) : title_case(src, src_lang);
    std::string cased_tgt = upper ? upper_case(tgt, tgt_lang) : title_case(tgt, tgt_lang);
    if (cased_src != src || cased_tgt != tgt) {  // not in a script without case
      src = std::move(cased_src);
      tgt = std::move(cased_tgt);
      ++(upper ? counts.upper : counts.title);
      changed = true;
    }
  }
  if (punct < config.no_final_punct) {
    std::string dropped = drop_final_punctuation(src);
    if (dropped != src) {
      src = std::move(dropped);
      tgt = drop_final_punctuation(tgt);
      ++counts.no_final_punct;
      changed = true;
    }
  }
  if (typo < config.typos) {
    std::string noisy = add_typos(src, typos_for(utf8_characters(src)), typo_rng);
    if (noisy != src) {
      src = std::move(noisy);
      ++counts.typos;
      changed = true;
    }
  }
  counts.changed += changed ? 1 : 0;
  return changed;
}

void add_counts(AugmentCounts& total, const AugmentCounts& part) {
  total.pairs += part.pairs;
  total.upper += part.upper;
  total.title += part.title;
  total.no_final_punct += part.no_final_punct;
  total.typos += part.typos;
  total.changed += part.changed;
  total.too_long += part.too_long;
}

std::string describe(const AugmentCounts& counts, int64_t epoch) {
  return "data.augment: epoch " + std::to_string(epoch + 1) + ": " +
         std::to_string(counts.changed) + " of " + std::to_string(counts.pairs) +
         " pairs modified (" + std::to_string(counts.upper) + " upper-cased, " +
         std::to_string(counts.title) + " title-cased, " + std::to_string(counts.no_final_punct) +
         " without final punctuation, " + std::to_string(counts.typos) + " with typos; " +
         std::to_string(counts.too_long) + " kept as they were: a side over data.max_len)";
}

}  // namespace nmt
