// text/markup.h: inline tags carried to the words their source words translate to, always
// well-formed.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/html.h"
#include "text/markup.h"

namespace nmt {
namespace {

/// Word links over `source` and `target`: pairs of word indices.
WordLinks links(const std::string& source, const std::string& target,
                const std::vector<std::pair<size_t, size_t>>& pairs) {
  return {text_words(source, {0, source.size()}), text_words(target, {0, target.size()}), pairs};
}

/// The first block of `html`, its tags carried to `target` by `pairs`, as HTML.
std::string carried(const std::string& html, const std::string& target,
                    const std::vector<std::pair<size_t, size_t>>& pairs) {
  const auto block = parse_html(html).blocks.at(0);
  return render_source(place_tags(block, target, links(block.text, target, pairs)));
}

TEST(Markup, ATagWrapsTheTranslationOfItsWordsWhereverTheyMoved) {
  // "a red car" -> "ein Auto rot" (rot and Auto swapped)
  EXPECT_EQ(carried("a <b>red</b> car", "ein Auto rot", {{0, 0}, {1, 2}, {2, 1}}),
            "ein Auto <b>rot</b>");
  EXPECT_EQ(carried("<i>a red</i> car", "ein Auto rot", {{0, 0}, {1, 2}, {2, 1}}),
            "<i>ein Auto rot</i>");  // from the first to the last linked word
  // Punctuation left out of the source word is left out of the target word.
  EXPECT_EQ(carried("a <b>dog</b>.", "ein Hund.", {{0, 0}, {1, 1}}), "ein <b>Hund</b>.");
}

TEST(Markup, NestingIsKeptAndSiblingsNeverCross) {
  EXPECT_EQ(carried("<i>big <em>dog</em></i> runs", "großer Hund rennt", {{0, 0}, {1, 1}, {2, 2}}),
            "<i>großer <em>Hund</em></i> rennt");
  // <i> gives way to <b>, which took its word: <em> stays inside the emptied <i>.
  EXPECT_EQ(carried("<b>a</b> <i>c <em>d</em></i>", "T0 T1", {{0, 0}, {1, 0}, {2, 0}}),
            "<b>T0</b><i><em></em></i> T1");
  // Two siblings linked to the same word: the first keeps it, the second goes after it.
  EXPECT_EQ(carried("<b>a</b> <i>b</i>", "x", {{0, 0}, {1, 0}}), "<b>x</b><i></i>");
  const auto block = parse_html("<b>a</b> <i>b</i>").blocks.at(0);
  const auto placed = place_tags(block, "x", links(block.text, "x", {{0, 0}, {1, 0}}));
  EXPECT_EQ(placed.tags[1].span.begin, 1u);  // moved after <b>'s word, not over it
  EXPECT_TRUE(placed.tags[1].span.empty());
}

TEST(Markup, VoidTagsAndTagsOverUnlinkedWordsGoAfterThePrecedingWord) {
  // Inside a word (one<br>two reads as one word): after the word before that one.
  EXPECT_EQ(carried("one<br>two three", "eins zwei drei", {{0, 0}, {1, 2}}), "<br>eins zwei drei");
  EXPECT_EQ(carried("one <br>two", "eins zwei", {{0, 0}, {1, 1}}), "eins<br> zwei");
  EXPECT_EQ(carried("<br>one two", "eins zwei", {{0, 0}, {1, 1}}), "<br>eins zwei");
  EXPECT_EQ(carried("one two<br>", "eins zwei", {{0, 0}, {1, 1}}), "eins zwei<br>");
}

TEST(Markup, LinksFromAttentionCoverEverySourceWord) {
  // Target word 0 and 1 both attend most to source 0; source 1 gets the target that attends to
  // it most.
  const std::vector<std::vector<double>> mass = {{0.9, 0.1}, {0.6, 0.4}};
  EXPECT_EQ(links_from_attention(mass),
            (std::vector<std::pair<size_t, size_t>>{{0, 0}, {0, 1}, {1, 1}}));
}

/// Whether `html` is well-formed: every tag that opens closes, innermost first (void elements
/// excepted); the tag names in order of their opening.
bool well_formed(const std::string& html, std::vector<std::string>* names) {
  std::vector<std::string> open;
  for (size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    const size_t end = html.find('>', at);
    if (end == std::string::npos) return false;
    const bool closing = html[at + 1] == '/';
    const auto name = html.substr(at + (closing ? 2 : 1), end - at - (closing ? 2 : 1));
    if (!closing && name == "br") continue;
    if (closing) {
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
    } else {
      open.push_back(name), names->push_back(name);
    }
  }
  return open.empty();
}

TEST(Markup, RandomTagsAndRandomLinksAlwaysGiveWellFormedOutputWithEveryTag) {
  std::mt19937 rng(11);
  const std::vector<std::string> names = {"b", "i", "em", "u"};
  for (int trial = 0; trial < 300; ++trial) {
    // A random nesting of tags over random words.
    std::string html;
    int depth = 0;
    std::vector<std::string> stack, opened;
    const int n_words = 1 + int(rng() % 8);
    for (int w = 0; w < n_words; ++w) {
      if (rng() % 3 == 0) {
        stack.push_back(names[rng() % names.size()]);
        html += "<" + stack.back() + ">", opened.push_back(stack.back()), ++depth;
      }
      if (rng() % 5 == 0) html += "<br>";
      html += "w" + std::to_string(w) + " ";
      if (!stack.empty() && rng() % 2 == 0) html += "</" + stack.back() + ">", stack.pop_back();
    }
    while (!stack.empty()) html += "</" + stack.back() + ">", stack.pop_back();
    const auto document = parse_html(html);
    if (document.blocks.empty()) continue;
    const auto& block = document.blocks[0];
    const int n_target = 1 + int(rng() % 8);
    std::string target;
    for (int t = 0; t < n_target; ++t)
      target += (t ? " " : "") + std::string("t") + std::to_string(t);
    std::vector<std::pair<size_t, size_t>> pairs;
    for (int s = 0; s < n_words; ++s) {
      if (rng() % 4) pairs.emplace_back(size_t(s), size_t(rng() % size_t(n_target)));
    }
    const auto out = render_source(place_tags(block, target, links(block.text, target, pairs)));
    std::vector<std::string> got;
    ASSERT_TRUE(well_formed(out, &got)) << html << " -> " << out;
    std::sort(got.begin(), got.end());
    std::sort(opened.begin(), opened.end());
    EXPECT_EQ(got, opened) << html << " -> " << out;  // every tag, in an order of its own
  }
}

}  // namespace
}  // namespace nmt
