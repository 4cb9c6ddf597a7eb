#pragma once

// HTML in, HTML out (`--format html`, serve's "format": "html"). libxml2's HTML parser reads the
// input (repairing it as browsers do, with a warning); the document becomes a template of literal
// HTML with holes, one per block of text to translate. Block elements (p, li, h1-h6, td, th, div,
// blockquote, ...) are segment boundaries; inline elements (b, i, em, strong, a, span, sub, sup,
// u, br, unknown ones) become tags over their block's text, put back around the translation of
// the words they wrapped (text/markup.h). Attributes, comments and the contents of script,
// style, pre, textarea and code pass through untranslated. Entities are decoded for the model and
// encoded back.

#include <string>
#include <vector>

#include "text/sentences.h"

namespace nmt {

/// One inline element (or comment) of a block: where it sits in the block's text.
struct InlineTag {
  TextSpan span;      ///< the bytes of TextBlock::text it wraps; empty for a void element (br)
  std::string open;   ///< "<a href=\"x\">"; the whole element for an opaque one
  std::string close;  ///< "</a>"; empty for void and opaque elements
  int parent = -1;    ///< the enclosing tag's index in TextBlock::tags; -1: the block itself
  /// <code> and comments: the element is `open`, verbatim, and stands for the words of `span`
  /// (its text, which the model reads so the sentence stays whole) in the translation.
  bool opaque = false;
  bool is_void() const { return close.empty() && !opaque; }
};

/// A run of text between block boundaries, with its inline markup.
struct TextBlock {
  std::string text;             ///< the decoded text (UTF-8), as the model reads it
  std::vector<InlineTag> tags;  ///< in document order: a parent before its children
};

/// An HTML document as literal HTML with holes: literals[0], block 0, literals[1], block 1, ...,
/// literals.back().
struct HtmlDocument {
  std::vector<std::string> literals;  ///< blocks.size() + 1 of them
  std::vector<TextBlock> blocks;      ///< only blocks with text to translate
  /// What the parser repaired, one message: "line 3: Unexpected end tag : b (and 2 more)".
  std::string repaired;
};

/// Parses `html` (a document starting with <!DOCTYPE or <html, else a fragment). Never throws on
/// malformed input: libxml2 repairs it and `repaired` says where. Text is never dropped.
HtmlDocument parse_html(const std::string& html);

/// `text` with & < > (and, in attributes, ") as entities; non-breaking spaces as &nbsp;.
std::string escape_html(const std::string& text, bool attribute = false);

/// The block as HTML with its tags where they were: what it renders as untranslated.
std::string render_source(const TextBlock& block);

/// The document with block i replaced by rendered[i] (HTML).
std::string render_document(const HtmlDocument& document, const std::vector<std::string>& rendered);

}  // namespace nmt
