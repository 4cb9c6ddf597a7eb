#include "text/html.h"

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

namespace nmt {
namespace {

using Names = std::set<std::string, std::less<>>;

/// Segment boundaries: elements whose content is blocks of text of its own.
const Names kBlockElements = {
    "address", "article",  "aside",      "base",     "blockquote", "body", "caption",  "center",
    "col",     "colgroup", "dd",         "details",  "dialog",     "dir",  "div",      "dl",
    "dt",      "fieldset", "figcaption", "figure",   "footer",     "form", "frameset", "h1",
    "h2",      "h3",       "h4",         "h5",       "h6",         "head", "header",   "hgroup",
    "hr",      "html",     "legend",     "li",       "link",       "main", "menu",     "meta",
    "nav",     "noscript", "ol",         "optgroup", "option",     "p",    "section",  "select",
    "summary", "table",    "tbody",      "td",       "tfoot",      "th",   "thead",    "title",
    "tr",      "ul"};
/// Elements whose content is not text to translate: passed through whole.
const Names kPassThrough = {"script", "style", "pre",    "textarea", "template",
                            "svg",    "math",  "iframe", "object",   "noembed"};
/// Elements without content or end tag.
const Names kVoidElements = {"area",  "base", "br",   "col",   "embed",  "hr",    "img",
                             "input", "link", "meta", "param", "source", "track", "wbr"};
/// Inline elements whose text passes through untranslated.
const Names kOpaqueInline = {"code", "kbd", "samp", "var"};

std::string name_of(const xmlNode* node) {
  return node->name ? reinterpret_cast<const char*>(node->name) : "";
}

std::string content_of(const xmlNode* node) {
  return node->content ? reinterpret_cast<const char*>(node->content) : "";
}

std::string open_tag(const xmlNode* node) {
  std::string tag = "<" + name_of(node);
  for (const xmlAttr* attr = node->properties; attr != nullptr; attr = attr->next) {
    tag += " " + std::string(reinterpret_cast<const char*>(attr->name));
    if (attr->children == nullptr) continue;  // a boolean attribute: <input disabled>
    std::unique_ptr<xmlChar, void (*)(void*)> value(
        xmlNodeListGetString(node->doc, attr->children, 1), xmlFree);
    tag +=
        "=\"" + escape_html(value ? reinterpret_cast<const char*>(value.get()) : "", true) + "\"";
  }
  return tag + ">";
}

std::string close_tag(const xmlNode* node) {
  return kVoidElements.count(name_of(node)) ? "" : "</" + name_of(node) + ">";
}

std::string doctype(const xmlDtd* dtd) {
  std::string text = "<!DOCTYPE " + std::string(reinterpret_cast<const char*>(dtd->name));
  if (dtd->ExternalID) {
    text += " PUBLIC \"" + std::string(reinterpret_cast<const char*>(dtd->ExternalID)) + "\"";
    if (dtd->SystemID)
      text += " \"" + std::string(reinterpret_cast<const char*>(dtd->SystemID)) + "\"";
  } else if (dtd->SystemID) {
    text += " SYSTEM \"" + std::string(reinterpret_cast<const char*>(dtd->SystemID)) + "\"";
  }
  return text + ">";
}

/// A node and its content as HTML, untouched (raw text inside script and style).
std::string verbatim(const xmlNode* node, bool raw_text = false) {
  switch (node->type) {
    case XML_TEXT_NODE:
      return raw_text ? content_of(node) : escape_html(content_of(node));
    case XML_CDATA_SECTION_NODE:
      return content_of(node);
    case XML_COMMENT_NODE:
      return "<!--" + content_of(node) + "-->";
    case XML_ELEMENT_NODE: {
      const auto name = name_of(node);
      std::string html = open_tag(node);
      const bool raw = name == "script" || name == "style";
      for (const xmlNode* child = node->children; child; child = child->next) {
        html += verbatim(child, raw);
      }
      return html + close_tag(node);
    }
    default:
      return "";
  }
}

bool is_block(const xmlNode* node) {
  if (node->type != XML_ELEMENT_NODE) return false;
  const auto name = name_of(node);
  if (kBlockElements.count(name) || kPassThrough.count(name)) return true;
  for (const xmlNode* child = node->children; child; child = child->next) {
    if (is_block(child)) return true;  // an inline element around a block holds blocks
  }
  return false;
}

bool has_text(const std::string& text) { return !text_words(text, {0, text.size()}).empty(); }

/// Walks the parsed tree into an HtmlDocument.
class Builder {
 public:
  Builder() { document_.literals.emplace_back(); }

  void nodes(const xmlNode* node) {
    for (; node != nullptr; node = node->next) visit(node);
  }
  void literal(const std::string& html) {
    flush();
    document_.literals.back() += html;
  }
  HtmlDocument finish() {
    flush();
    return std::move(document_);
  }

 private:
  void visit(const xmlNode* node) {
    switch (node->type) {
      case XML_TEXT_NODE:
        run_.text += content_of(node);
        return;
      case XML_CDATA_SECTION_NODE:
        run_.text += content_of(node);
        return;
      case XML_COMMENT_NODE:
        if (run_.tags.empty() && !has_text(run_.text)) return literal(verbatim(node));
        add_tag(verbatim(node), "", true, 0);
        return;
      case XML_DTD_NODE:
        return literal(doctype(reinterpret_cast<const xmlDtd*>(node)));
      case XML_ELEMENT_NODE:
        return element(node);
      default:
        return;
    }
  }

  void element(const xmlNode* node) {
    const auto name = name_of(node);
    if (kPassThrough.count(name)) return literal(verbatim(node));
    if (is_block(node)) {
      literal(open_tag(node));
      nodes(node->children);
      return literal(close_tag(node));
    }
    if (kOpaqueInline.count(name)) {
      std::unique_ptr<xmlChar, void (*)(void*)> text(xmlNodeGetContent(node), xmlFree);
      const std::string words = text ? reinterpret_cast<const char*>(text.get()) : "";
      add_tag(verbatim(node), "", true, words.size());
      run_.text += words;
      return;
    }
    const size_t index = add_tag(open_tag(node), close_tag(node), false, 0);
    open_.push_back(int(index));
    nodes(node->children);
    open_.pop_back();
    run_.tags[index].span.end = run_.text.size();
  }

  size_t add_tag(std::string open, std::string close, bool opaque, size_t length) {
    InlineTag tag;
    tag.span = {run_.text.size(), run_.text.size() + length};
    tag.open = std::move(open);
    tag.close = std::move(close);
    tag.opaque = opaque;
    tag.parent = open_.empty() ? -1 : open_.back();
    run_.tags.push_back(std::move(tag));
    return run_.tags.size() - 1;
  }

  /// Ends the run of inline content: a block to translate, or literal HTML if it has no words.
  void flush() {
    if (has_text(run_.text)) {
      document_.blocks.push_back(std::move(run_));
      document_.literals.emplace_back();
    } else {
      document_.literals.back() += render_source(run_);
    }
    run_ = {};
  }

  HtmlDocument document_;
  TextBlock run_;
  std::vector<int> open_;  ///< the inline tags open at this point of the run
};

/// The first problem the parser repaired, and how many there were.
struct Repairs {
  int count = 0;
  std::string first;
};

void collect_repair(void* context, xmlErrorPtr error) {
  auto* repairs = static_cast<Repairs*>(context);
  if (repairs->count++ > 0 || error == nullptr) return;
  std::string message = error->message ? error->message : "malformed HTML";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  repairs->first = "line " + std::to_string(error->line) + ": " + message;
}

bool is_document(const std::string& html) {
  size_t at = html.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a byte-order mark
  at = html.find_first_not_of(" \t\r\n", at);
  if (at == std::string::npos) return false;
  std::string start = html.substr(at, 9);
  std::transform(start.begin(), start.end(), start.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return start.rfind("<!doctype", 0) == 0 || start.rfind("<html", 0) == 0;
}

}  // namespace

std::string escape_html(const std::string& text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"' && attribute) {
      out += "&quot;";
    } else if (c == '\xC2' && i + 1 < text.size() && text[i + 1] == '\xA0') {
      out += "&nbsp;", ++i;
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_source(const TextBlock& block) {
  // The tags are in document order and nest: an open tag closes once the text reaches its end,
  // unless the next tag lies inside it.
  const auto inside = [&](size_t tag, int ancestor) {
    for (int p = block.tags[tag].parent; p >= 0; p = block.tags[size_t(p)].parent) {
      if (p == ancestor) return true;
    }
    return false;
  };
  std::string html;
  std::vector<int> open;
  size_t at = 0;
  const auto write_to = [&](size_t position) {
    if (position > at) html += escape_html(block.text.substr(at, position - at)), at = position;
  };
  const auto close_top = [&] {
    write_to(std::max(at, block.tags[size_t(open.back())].span.end));
    html += block.tags[size_t(open.back())].close;
    open.pop_back();
  };
  for (size_t t = 0; t < block.tags.size(); ++t) {
    const auto& tag = block.tags[t];
    while (!open.empty() && !inside(t, open.back())) close_top();
    write_to(tag.span.begin);
    html += tag.open;
    if (tag.opaque) {
      at = std::max(at, tag.span.end);  // it stands for its words
    } else if (!tag.is_void()) {
      open.push_back(int(t));
    }
  }
  while (!open.empty()) close_top();
  write_to(block.text.size());
  return html;
}

std::string render_document(const HtmlDocument& document,
                            const std::vector<std::string>& rendered) {
  std::string html = document.literals.front();
  for (size_t i = 0; i < document.blocks.size(); ++i) {
    html += i < rendered.size() ? rendered[i] : render_source(document.blocks[i]);
    html += document.literals[i + 1];
  }
  return html;
}

HtmlDocument parse_html(const std::string& html) {
  static std::once_flag initialised;
  std::call_once(initialised, xmlInitParser);
  const bool whole = is_document(html);
  // A fragment goes inside a <div> of ours, so that text at its top level is not given an
  // implied <p>; the div itself is not written back.
  const std::string input = whole ? html : "<div>" + html + "</div>";
  Repairs repairs;
  xmlSetStructuredErrorFunc(&repairs, collect_repair);
  std::unique_ptr<htmlParserCtxt, void (*)(htmlParserCtxtPtr)> context(htmlNewParserCtxt(),
                                                                       htmlFreeParserCtxt);
  htmlDocPtr doc = context ? htmlCtxtReadMemory(
                                 context.get(), input.data(), int(input.size()), nullptr, "UTF-8",
                                 HTML_PARSE_NOIMPLIED | HTML_PARSE_NODEFDTD | HTML_PARSE_NONET |
                                     HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING)
                           : nullptr;
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> owned(doc, xmlFreeDoc);
  Builder builder;
  if (doc != nullptr) {
    for (const xmlNode* node = doc->children; node != nullptr; node = node->next) {
      const bool wrapper = !whole && node == doc->children && node->type == XML_ELEMENT_NODE;
      if (wrapper) {
        builder.nodes(node->children);
      } else {
        builder.nodes(node);
        break;  // nodes() walks the rest of the siblings
      }
    }
  }
  auto document = builder.finish();
  if (doc == nullptr) document.literals.back() = escape_html(html);  // never lose the text
  // The parser drops whitespace outside the root element: the line break after the doctype
  // and after </html> come back as they were.
  const auto& head = document.literals.front();
  const size_t doctype_end = head.rfind("<!DOCTYPE", 0) == 0 ? head.find('>') : std::string::npos;
  const size_t source_end = whole ? html.find('>', html.find("<!")) : std::string::npos;
  if (doctype_end != std::string::npos && source_end != std::string::npos &&
      html.compare(0, source_end + 1, head, 0, doctype_end + 1) == 0) {
    const size_t gap = html.find_first_not_of(" \t\r\n", source_end + 1);
    document.literals.front().insert(doctype_end + 1,
                                     html.substr(source_end + 1, gap - source_end - 1));
  }
  const size_t last = html.find_last_not_of(" \t\r\n");
  const std::string tail = last == std::string::npos ? "" : html.substr(last + 1);
  auto& end = document.literals.back();
  if (!tail.empty() &&
      (end.size() < tail.size() || end.compare(end.size() - tail.size(), tail.size(), tail) != 0)) {
    end += tail;
  }
  if (repairs.count > 0) {
    document.repaired = repairs.first;
    if (repairs.count > 1)
      document.repaired += " (and " + std::to_string(repairs.count - 1) + " more)";
  }
  return document;
}

}  // namespace nmt
