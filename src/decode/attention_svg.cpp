#include "decode/attention_svg.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "data/corpus.h"
#include "decode/translator.h"

namespace nmt {
namespace {

int label_extent(const std::vector<std::string>& labels, const SvgStyle& style) {
  size_t longest = 0;
  // Display width estimate: one per character.
  for (const auto& label : labels) longest = std::max(longest, utf8_characters(label));
  return static_cast<int>(static_cast<double>(longest) * style.font_size * 0.62) + 6;
}

std::string fixed3(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  return buffer;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

/// Where things go, in user units.
struct Layout {
  int cell, left, top, width, height;
};

Layout layout(const Heatmap& map, const SvgStyle& style) {
  Layout l{style.cell, style.margin + label_extent(map.row_labels, style),
           style.margin + label_extent(map.column_labels, style), 0, 0};
  l.width = l.left + static_cast<int>(map.column_labels.size()) * l.cell + style.margin;
  l.height = l.top + static_cast<int>(map.row_labels.size()) * l.cell + style.margin;
  return l;
}

/// Column labels above the matrix, vertical, reading upwards.
void write_column_labels(std::ostream& svg, const Heatmap& map, const Layout& l) {
  for (size_t c = 0; c < map.column_labels.size(); ++c) {
    const int x = l.left + static_cast<int>(c) * l.cell + l.cell / 2, y = l.top - 6;
    svg << "<text x=\"" << x << "\" y=\"" << y << "\" transform=\"rotate(-90 " << x << " " << y
        << ")\" dominant-baseline=\"middle\">" << xml_escape(map.column_labels[c]) << "</text>\n";
  }
}

/// Row `r`: its label on the left and one cell per column, with a tooltip.
void write_row(std::ostream& svg, const Heatmap& map, const Layout& l, size_t r) {
  const size_t cols = map.column_labels.size();
  const int y = l.top + static_cast<int>(r) * l.cell;
  svg << "<text x=\"" << l.left - 6 << "\" y=\"" << y + l.cell / 2
      << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << xml_escape(map.row_labels[r])
      << "</text>\n";
  for (size_t c = 0; c < cols; ++c) {
    const double value = map.values[r * cols + c];
    svg << "<rect class=\"cell\" x=\"" << l.left + static_cast<int>(c) * l.cell << "\" y=\"" << y
        << "\" width=\"" << l.cell << "\" height=\"" << l.cell
        << "\" fill=\"#08306b\" fill-opacity=\"" << fixed3(std::clamp(value, 0.0, 1.0))
        << "\"><title>" << xml_escape(map.column_labels[c]) << " → "
        << xml_escape(map.row_labels[r]) << ": " << fixed3(value) << "</title></rect>\n";
  }
}

}  // namespace

std::string heatmap_svg(const Heatmap& map, const SvgStyle& style) {
  const size_t rows = map.row_labels.size(), cols = map.column_labels.size();
  if (map.values.size() != rows * cols) {
    throw Error("heat map: " + std::to_string(map.values.size()) + " values for " +
                std::to_string(rows) + " rows × " + std::to_string(cols) + " columns");
  }
  const Layout l = layout(map, style);
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << l.width << "\" height=\""
      << l.height << "\" viewBox=\"0 0 " << l.width << " " << l.height
      << "\" font-family=\"sans-serif\" font-size=\"" << style.font_size << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  write_column_labels(svg, map, l);
  for (size_t r = 0; r < rows; ++r) write_row(svg, map, l, r);
  svg << "<rect x=\"" << l.left << "\" y=\"" << l.top << "\" width=\"" << cols * l.cell
      << "\" height=\"" << rows * l.cell << "\" fill=\"none\" stroke=\"#999\"/>\n</svg>\n";
  return svg.str();
}

std::string attention_svg(const AttentionMap& attention, const SvgStyle& style) {
  const auto weights = attention.weights.to(at::kFloat).contiguous();  // [tgt_len, src_len]
  TORCH_CHECK(weights.dim() == 2, "attention_svg: weights must be [tgt_len, src_len]");
  Heatmap map{
      attention.src_pieces, attention.tgt_pieces,
      std::vector<float>(weights.data_ptr<float>(), weights.data_ptr<float>() + weights.numel())};
  return heatmap_svg(map, style);
}

void write_svg(const std::filesystem::path& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << svg) || !out.flush()) {
    throw Error("cannot write the SVG file " + path.string() + " (check the folder exists)");
  }
}

}  // namespace nmt
