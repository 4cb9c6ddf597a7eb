#include <gtest/gtest.h>
#include <torch/torch.h>

#include <regex>
#include <string>
#include <vector>

#include "decode/attention_svg.h"
#include "decode/translator.h"
#include "test_util.h"

namespace nmt {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// True if every element opened is closed in order (self-closing ones count as both).
bool balanced(const std::string& svg) {
  static const std::regex tag(R"(<(/?)([A-Za-z][\w:-]*)[^>]*?(/?)>)");
  std::vector<std::string> open;
  for (std::sregex_iterator it(svg.begin(), svg.end(), tag), end; it != end; ++it) {
    const auto& m = *it;
    if (m[3].length() > 0) continue;  // <x .../>
    if (m[1].length() == 0) {
      open.push_back(m[2]);
    } else if (open.empty() || open.back() != m[2]) {
      return false;
    } else {
      open.pop_back();
    }
  }
  return open.empty();
}

Heatmap sample() {
  return {{"▁a<b", "&c", "</s>"},
          {"\"x\"", "y'", "</s>"},
          {0.9f, 0.1f, 0.0f, 0.2f, 0.7f, 0.1f, 0.0f, 0.0f, 1.0f}};
}

TEST(AttentionSvg, IsBalancedWithOneCellPerWeight) {
  const auto svg = heatmap_svg(sample());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 9u);
  EXPECT_EQ(count(svg, "<svg"), 1u);
  EXPECT_NE(svg.find("fill-opacity=\"0.900\""), std::string::npos);
}

TEST(AttentionSvg, EscapesLabels) {
  const auto svg = heatmap_svg(sample());
  EXPECT_NE(svg.find("▁a&lt;b"), std::string::npos);
  EXPECT_NE(svg.find("&amp;c"), std::string::npos);
  EXPECT_NE(svg.find("&quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("y&apos;"), std::string::npos);
  EXPECT_NE(svg.find("&lt;/s&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_EQ(svg.find(">&c"), std::string::npos);
  EXPECT_EQ(xml_escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
}

TEST(AttentionSvg, AttentionMapGivesSourceColumnsAndTargetRows) {
  AttentionMap map;
  map.src_pieces = {"a", "b", "</s>"};
  map.tgt_pieces = {"x", "</s>"};
  map.weights = torch::softmax(torch::randn({2, 3}), -1);  // [tgt_len, src_len]
  const auto svg = attention_svg(map);
  EXPECT_TRUE(balanced(svg));
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 6u);
  EXPECT_NE(svg.find("a → x"), std::string::npos);  // column label first in the tooltip
}

TEST(AttentionSvg, SizeMismatchAndUnwritablePathAreErrors) {
  Heatmap bad = sample();
  bad.values.pop_back();
  test::expect_error([&] { heatmap_svg(bad); }, "8 values for 3 rows");
  test::expect_error([] { write_svg("/nonexistent/dir/a.svg", "<svg/>"); },
                     "/nonexistent/dir/a.svg");
}

TEST(AttentionSvg, WritesTheFile) {
  const auto dir = test::temp_dir("svg");
  write_svg(dir / "a.svg", heatmap_svg(sample()));
  EXPECT_TRUE(std::filesystem::file_size(dir / "a.svg") > 100);
}

}  // namespace
}  // namespace nmt
