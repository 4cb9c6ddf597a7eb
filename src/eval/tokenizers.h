#pragma once

#include <string>

#include "core/bleu_tokenizer.h"

namespace nmt {

/// sacreBLEU's default for a target language: zh for Chinese, ja-mecab for Japanese, 13a for
/// everything else (an empty or unknown code too). Any other value comes back unchanged.
BleuTokenizer resolve_bleu_tokenizer(BleuTokenizer tokenizer, const std::string& target_language);

/// `line` split by `tokenizer` (not kAuto: an nmt::Error), tokens joined by single spaces:
///  - 13a: mteval-v13a.pl (tokenize_13a in eval/bleu.h);
///  - intl: mteval-v14.pl's international rules: punctuation (Unicode category P) split off
///    unless a number (N) is on that side, symbols (S) always split off (categories from ICU);
///  - char: every non-space character a token;
///  - zh: each Chinese character a token (sacreBLEU's code-point ranges, quirks included), the
///    rest by 13a's rules without its padding;
///  - ja-mecab: MeCab's words (-Owakati) with the IPA dictionary;
///  - none: the line as it is.
std::string tokenize_for_bleu(const std::string& line, BleuTokenizer tokenizer);

/// The tokenizer's name in a BLEU signature: "13a", "intl", ... and, as sacreBLEU writes it,
/// "ja-mecab-<MeCab version>-IPA".
std::string bleu_tokenizer_signature(BleuTokenizer tokenizer);

/// sacreBLEU's TokenizerRegexp: 13a's four substitutions on `line` as it is (no padding, no
/// entity unescaping), then whitespace normalisation. tokenize_13a and the zh tokenizer use it.
std::string tokenize_13a_rules(const std::string& line);

/// MeCab's word split of `line` (stripped), with the IPA dictionary: an nmt::Error when this
/// build has no MeCab or the dictionary is missing or not IPA (eval/tokenizer_ja_mecab.cpp).
std::string tokenize_ja_mecab(const std::string& line);

/// "0.996": the MeCab library's version (for the signature); an nmt::Error without MeCab.
std::string mecab_version();

}  // namespace nmt
