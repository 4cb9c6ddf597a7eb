#pragma once

#include <utility>

#include "core/choice.h"

namespace nmt {

/// The tokenizers BLEU can split a segment with, named as sacreBLEU names them (its --tokenize).
/// kAuto is not a tokenizer: it stands for sacreBLEU's choice by target language
/// (resolve_bleu_tokenizer), so configs and the command line can leave the choice to it.
enum class BleuTokenizer { kAuto, k13a, kIntl, kChar, kZh, kJaMecab, kNone };

template <>
struct ChoiceNames<BleuTokenizer> {
  static constexpr std::pair<BleuTokenizer, const char*> names[] = {
      {BleuTokenizer::kAuto, "auto"}, {BleuTokenizer::k13a, "13a"},
      {BleuTokenizer::kIntl, "intl"}, {BleuTokenizer::kChar, "char"},
      {BleuTokenizer::kZh, "zh"},     {BleuTokenizer::kJaMecab, "ja-mecab"},
      {BleuTokenizer::kNone, "none"}};
};

}  // namespace nmt
