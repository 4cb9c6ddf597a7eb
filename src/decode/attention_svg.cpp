#include "decode/attention_svg.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "decode/translator.h"

namespace nmt {
namespace {

/// Display width estimate: UTF-8 code points (continuation bytes 10xxxxxx are not counted).
size_t code_points(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

int label_extent(const std::vector<std::string>& labels, const SvgStyle& style) {
  size_t longest = 0;
  for (const auto& label : labels) longest = std::max(longest, code_points(label));
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
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string heatmap_svg(const Heatmap& map, const SvgStyle& style) {
  const size_t rows = map.row_labels.size(), cols = map.column_labels.size();
  if (map.values.size() != rows * cols) {
    throw Error("heat map: " + std::to_string(map.values.size()) + " values for " +
                std::to_string(rows) + " rows × " + std::to_string(cols) + " columns");
  }
  const int cell = style.cell;
  const int left = style.margin + label_extent(map.row_labels, style);
  const int top = style.margin + label_extent(map.column_labels, style);
  const int width = left + static_cast<int>(cols) * cell + style.margin;
  const int height = top + static_cast<int>(rows) * cell + style.margin;
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\""
      << " font-size=\"" << style.font_size << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t c = 0; c < cols; ++c) {  // source labels, vertical, reading upwards
    const int x = left + static_cast<int>(c) * cell + cell / 2, y = top - 6;
    svg << "<text x=\"" << x << "\" y=\"" << y << "\" transform=\"rotate(-90 " << x << " " << y
        << ")\" dominant-baseline=\"middle\">" << xml_escape(map.column_labels[c]) << "</text>\n";
  }
  for (size_t r = 0; r < rows; ++r) {
    const int y = top + static_cast<int>(r) * cell + cell / 2;
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y
        << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << xml_escape(map.row_labels[r])
        << "</text>\n";
    for (size_t c = 0; c < cols; ++c) {
      const double value = std::clamp(static_cast<double>(map.values[r * cols + c]), 0.0, 1.0);
      svg << "<rect class=\"cell\" x=\"" << left + static_cast<int>(c) * cell << "\" y=\""
          << y - cell / 2 << "\" width=\"" << cell << "\" height=\"" << cell
          << "\" fill=\"#08306b\" fill-opacity=\"" << fixed3(value) << "\"><title>"
          << xml_escape(map.column_labels[c]) << " → " << xml_escape(map.row_labels[r]) << ": "
          << fixed3(map.values[r * cols + c]) << "</title></rect>\n";
    }
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << cols * cell
      << "\" height=\"" << rows * cell << "\" fill=\"none\" stroke=\"#999\"/>\n</svg>\n";
  return svg.str();
}

std::string attention_svg(const AttentionMap& attention, const SvgStyle& style) {
  const auto weights = attention.weights.to(at::kFloat).contiguous();  // [tgt_len, src_len]
  TORCH_CHECK(weights.dim() == 2, "attention_svg: weights must be [tgt_len, src_len]");
  Heatmap map{attention.src_pieces, attention.tgt_pieces,
              std::vector<float>(weights.data_ptr<float>(),
                                 weights.data_ptr<float>() + weights.numel())};
  return heatmap_svg(map, style);
}

void write_svg(const std::filesystem::path& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << svg) || !out.flush()) {
    throw Error("cannot write the SVG file " + path.string() + " (check the folder exists)");
  }
}

}  // namespace nmt
