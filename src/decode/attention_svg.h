#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nmt {

struct AttentionMap;

/// A labelled matrix to draw: rows × columns values in [0, 1], row-major.
struct Heatmap {
  std::vector<std::string> column_labels;  ///< x axis (source pieces), drawn above, rotated
  std::vector<std::string> row_labels;     ///< y axis (target pieces), drawn on the left
  std::vector<float> values;               ///< rows * columns, row-major
};

/// Layout of the drawing, in SVG user units (pixels).
struct SvgStyle {
  int cell = 28;       ///< side of one cell
  int font_size = 13;  ///< label font size
  int margin = 8;      ///< blank border around everything
};

/// Escapes &, <, >, " and ' for XML text and attribute values.
std::string xml_escape(const std::string& text);

/// A standalone SVG document drawing `map` as a heat map: one <rect class="cell"> per value,
/// darker = larger (fill-opacity = value, clamped to [0, 1]), each with a <title> tooltip
/// "column → row: value". Labels are XML-escaped. Sizes that disagree are an nmt::Error.
std::string heatmap_svg(const Heatmap& map, const SvgStyle& style = {});

/// The cross-attention heat map: source pieces on x, target pieces on y.
std::string attention_svg(const AttentionMap& attention, const SvgStyle& style = {});

/// Writes `svg` to `path`; an unwritable path is an nmt::Error naming it.
void write_svg(const std::filesystem::path& path, const std::string& svg);

}  // namespace nmt
