#pragma once

// The shapes of substitution the sacreBLEU tokenizers are made of, as scans over a string of
// bytes (13a, whose classes are ASCII) or of code points (intl, zh). Each does what Python's
// re.sub does with its pattern: left to right, a match consumed whole, so matches never overlap.

#include <cstddef>

namespace nmt::regex_rules {

/// re.sub(r'(C)', r' \1 ', text): a space on each side of every character `pick` accepts.
template <class String, class Pick>
String pad_each(const String& text, Pick pick) {
  using Char = typename String::value_type;
  String out;
  out.reserve(text.size() * 2);
  for (const Char c : text) {
    if (pick(c)) {
      out += Char(' ');
      out += c;
      out += Char(' ');
    } else {
      out += c;
    }
  }
  return out;
}

/// r'\1 \2 ': a space between the two characters and one after them.
struct SpaceBetweenAndAfter {
  template <class String, class Char>
  void operator()(String& out, Char a, Char b) const {
    out += a;
    out += Char(' ');
    out += b;
    out += Char(' ');
  }
};

/// r' \1 \2': a space before the two characters and one between them.
struct SpaceBeforeAndBetween {
  template <class String, class Char>
  void operator()(String& out, Char a, Char b) const {
    out += Char(' ');
    out += a;
    out += Char(' ');
    out += b;
  }
};

/// re.sub(r'(A)(B)', replacement, text) for one-character groups: `emit` appends the
/// replacement of each match (SpaceBetweenAndAfter, SpaceBeforeAndBetween).
template <class String, class First, class Second, class Emit>
String substitute_pairs(const String& text, First first, Second second, Emit emit) {
  String out;
  out.reserve(text.size() + text.size() / 2);
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      emit(out, text[i], text[i + 1]);
      i += 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace nmt::regex_rules
