#include "core/case_mapping.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

namespace nmt {
namespace {

icu::Locale case_locale(const std::string& lang) {
  std::string name = lang;
  for (auto& c : name) c = c == '-' ? '_' : c;
  return icu::Locale::createFromName(name.c_str());
}

std::string to_utf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

}  // namespace

std::string upper_case(const std::string& text, const std::string& lang) {
  auto value = icu::UnicodeString::fromUTF8(text);
  value.toUpper(case_locale(lang));
  return to_utf8(value);
}

std::string lower_case(const std::string& text, const std::string& lang) {
  auto value = icu::UnicodeString::fromUTF8(text);
  value.toLower(case_locale(lang));
  return to_utf8(value);
}

std::string title_case(const std::string& text, const std::string& lang) {
  auto value = icu::UnicodeString::fromUTF8(text);
  value.toTitle(nullptr, case_locale(lang));  // nullptr: the locale's word BreakIterator
  return to_utf8(value);
}

}  // namespace nmt
