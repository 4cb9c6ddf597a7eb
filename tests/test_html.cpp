// text/html.h: libxml2's HTML parser read into blocks of text with inline tags, and written
// back exactly.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/html.h"

namespace nmt {
namespace {

/// The document written back with every block untranslated.
std::string round_trip(const HtmlDocument& document) {
  std::vector<std::string> rendered;
  for (const auto& block : document.blocks) rendered.push_back(render_source(block));
  return render_document(document, rendered);
}

TEST(Html, BlocksAreSegmentsAndInlineTagsSpanTheirText) {
  const std::string html =
      "<p>A <b>red</b> car &amp; a <i>big <em>dog</em></i>.</p>\n<li>Two<br>lines</li>";
  const auto document = parse_html(html);
  ASSERT_EQ(document.blocks.size(), 2u);
  const auto& first = document.blocks[0];
  EXPECT_EQ(first.text, "A red car & a big dog.");  // entities decoded for the model
  ASSERT_EQ(first.tags.size(), 3u);
  EXPECT_EQ(first.tags[0].open, "<b>");
  EXPECT_EQ(first.text.substr(first.tags[0].span.begin, first.tags[0].span.size()), "red");
  EXPECT_EQ(first.text.substr(first.tags[1].span.begin, first.tags[1].span.size()), "big dog");
  EXPECT_EQ(first.tags[2].parent, 1);  // <em> inside <i>
  EXPECT_TRUE(document.blocks[1].tags[0].is_void());
  EXPECT_EQ(document.blocks[1].text, "Twolines");
  EXPECT_TRUE(document.repaired.empty());
  EXPECT_EQ(round_trip(document), html);
}

TEST(Html, AttributesCommentsScriptsPreAndCodePassThrough) {
  const std::string html =
      "<!DOCTYPE html>\n<html><head><title>Dogs</title><style>p > b { color: red }</style></head>"
      "<body><!-- note --><p class=\"x\" title=\"a &quot;dog&quot;\">Run <code>ls -l</code> now."
      "</p><pre>  keep  this  </pre><script>if (a < b) go();</script></body></html>";
  const auto document = parse_html(html);
  std::vector<std::string> texts;
  for (const auto& block : document.blocks) texts.push_back(block.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"Dogs", "Run ls -l now."}));
  const auto& code = document.blocks[1].tags[0];
  EXPECT_TRUE(code.opaque);
  EXPECT_EQ(code.open, "<code>ls -l</code>");
  EXPECT_EQ(round_trip(document), html);
  // A block replaced: only its text changes.
  const auto out = render_document(document, {"Hunde", "Lauf <code>ls -l</code> jetzt."});
  EXPECT_NE(out.find("<title>Hunde</title>"), std::string::npos) << out;
  EXPECT_NE(
      out.find("<p class=\"x\" title=\"a &quot;dog&quot;\">Lauf <code>ls -l</code> jetzt.</p>"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("<script>if (a < b) go();</script>"), std::string::npos) << out;
}

TEST(Html, MalformedHtmlIsRepairedWithAWarningAndNoTextIsLost) {
  const auto document = parse_html("<p>one <b>two</p><p>three</i> four<div>five");
  EXPECT_NE(document.repaired.find("line 1:"), std::string::npos) << document.repaired;
  std::string all;
  for (const auto& block : document.blocks) all += block.text + "|";
  EXPECT_EQ(all, "one two|three four|five|");
  // Every tag that opens closes, in order.
  EXPECT_EQ(round_trip(document), "<p>one <b>two</b></p><p>three four</p><div>five</div>");
}

TEST(Html, AFragmentGetsNoImpliedElementsAndEntitiesAreEncodedBack) {
  const auto document = parse_html("Fish &lt;&gt; chips&nbsp;now");
  ASSERT_EQ(document.blocks.size(), 1u);
  EXPECT_EQ(document.blocks[0].text, "Fish <> chips\u00A0now");
  EXPECT_EQ(round_trip(document), "Fish &lt;&gt; chips&nbsp;now");
  EXPECT_EQ(round_trip(parse_html("")), "");
  EXPECT_EQ(round_trip(parse_html("<p> </p>\n")), "<p> </p>\n");
}

}  // namespace
}  // namespace nmt
