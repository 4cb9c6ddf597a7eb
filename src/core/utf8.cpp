#include "core/utf8.h"

namespace nmt {
namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b >= 0x80 <-> U+DC00 + b

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

/// Sequence length for a lead byte and the allowed range of the second byte (RFC 3629 §4):
/// the narrowed ranges exclude overlong forms, surrogates and code points above U+10FFFF.
struct LeadByte {
  size_t length;  // 0: not a lead byte
  unsigned char low;
  unsigned char high;
};

LeadByte classify_lead(unsigned char lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

/// Length of the valid UTF-8 sequence starting at text[i], or 0 if there is none.
size_t valid_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const LeadByte lead = classify_lead(byte(0));
  if (lead.length <= 1) return lead.length;
  if (i + lead.length > text.size()) return 0;
  if (byte(1) < lead.low || byte(1) > lead.high) return 0;
  for (size_t k = 2; k < lead.length; ++k) {
    if (!is_continuation(byte(k))) return 0;
  }
  return lead.length;
}

char32_t decode_sequence(const std::string& text, size_t i, size_t length) {
  const auto lead = static_cast<unsigned char>(text[i]);
  static constexpr unsigned char kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t c = lead & kLeadMask[length];
  for (size_t k = 1; k < length; ++k) {
    c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  }
  return c;
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c >= kEscapeBase + 0x80 && c <= kEscapeBase + 0xFF) {
    out += static_cast<char>(c - kEscapeBase);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

std::u32string utf8_decode(const std::string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = valid_sequence_length(text, i);
    if (length == 0) {
      out += kEscapeBase + static_cast<unsigned char>(text[i]);
      ++i;
    } else {
      out += decode_sequence(text, i, length);
      i += length;
    }
  }
  return out;
}

std::string utf8_encode(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(c, out);
  return out;
}

}  // namespace nmt
