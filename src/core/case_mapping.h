#pragma once

// Case mappings of whole texts by ICU's full, language-sensitive rules (German "ß" -> "SS",
// Turkish dotted i), shared by inference-time casing (text/casing.h) and training-time
// augmentation (data/augment.h).

#include <string>

namespace nmt {

/// `text` upper-cased for `lang` (a code such as en, de, pt-BR).
std::string upper_case(const std::string& text, const std::string& lang);

/// `text` lower-cased for `lang`.
std::string lower_case(const std::string& text, const std::string& lang);

/// `text` in Title Case for `lang`: the first letter of every word (ICU's word boundaries)
/// upper-cased, the rest of the word lower-cased.
std::string title_case(const std::string& text, const std::string& lang);

}  // namespace nmt
