// text/chunking.h: a sentence too long for the model split into parts that fit, never cut.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/chunking.h"

namespace nmt {
namespace {

/// One piece per word (whitespace-separated), as a stand-in for SentencePiece.
size_t words(const std::string& text) { return text_words(text, {0, text.size()}).size(); }
/// One piece per byte.
size_t bytes(const std::string& text) {
  size_t n = 0;
  for (const char c : text) n += c == ' ' ? 0 : 1;
  return n;
}

std::vector<std::string> parts_of(const std::string& text, size_t limit,
                                  const PieceCounter& count = words) {
  std::vector<std::string> out;
  for (const auto& p : split_to_fit(text, {0, text.size()}, limit, count)) {
    out.push_back(text.substr(p.begin, p.size()));
  }
  return out;
}

TEST(Chunking, ASentenceThatFitsIsOnePartTrimmed) {
  EXPECT_EQ(parts_of("  a b c  ", 3), (std::vector<std::string>{"a b c"}));
  EXPECT_TRUE(parts_of("   ", 3).empty());
}

TEST(Chunking, ClausePunctuationComesFirstThenWordsThenCodePoints) {
  EXPECT_EQ(parts_of("a b, c d; e f g", 4), (std::vector<std::string>{"a b, c d;", "e f g"}));
  // A clause above the limit alone: its words, packed.
  EXPECT_EQ(parts_of("a b c d e f g, h", 3),
            (std::vector<std::string>{"a b c", "d e f", "g,", "h"}));
  // A word above the limit alone: its code points (one piece per byte here; ü is 2 bytes).
  EXPECT_EQ(parts_of("xx abcdüfgh", 3, bytes),
            (std::vector<std::string>{"xx", "abc", "dü", "fgh"}));
}

TEST(Chunking, EveryCharacterIsInExactlyOnePartAndEveryPartFits) {
  std::mt19937 rng(7);
  const std::string alphabet = "abc ,;:d";
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const int length = 1 + int(rng() % 120);
    for (int i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
    const size_t limit = 1 + rng() % 6;
    const auto parts = split_to_fit(text, {0, text.size()}, limit, bytes);
    std::string kept, expected;
    size_t at = 0;
    for (const auto& p : parts) {
      ASSERT_GE(p.begin, at) << text;
      EXPECT_LE(bytes(text.substr(p.begin, p.size())), limit) << text;
      for (size_t i = at; i < p.begin; ++i) EXPECT_EQ(text[i], ' ') << text;  // only spaces between
      kept += text.substr(p.begin, p.size());
      at = p.end;
    }
    for (size_t i = at; i < text.size(); ++i) EXPECT_EQ(text[i], ' ') << text;
    for (const char c : text) expected += c == ' ' ? "" : std::string(1, c);
    std::string kept_chars;
    for (const char c : kept) kept_chars += c == ' ' ? "" : std::string(1, c);
    EXPECT_EQ(kept_chars, expected) << text;
  }
}

TEST(Chunking, AMegabyteWordIsSplitWithoutQuadraticCounting) {
  const std::string text(1 << 20, 'a');
  size_t calls = 0;
  const auto parts = split_to_fit(text, {0, text.size()}, 100, [&](const std::string& s) {
    ++calls;
    return s.size() / 4;  // four bytes a piece
  });
  size_t covered = 0;
  for (const auto& p : parts) covered += p.size();
  EXPECT_EQ(covered, text.size());
  EXPECT_EQ(parts.size(), text.size() / 403 + 1);  // 403 bytes encode to 100 pieces
  EXPECT_LT(calls, 20 * parts.size());
}

}  // namespace
}  // namespace nmt
