#pragma once

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace nmt {

/// The records a run leaves behind: `metrics.jsonl` (one JSON object per log interval and per
/// validation; scripts/plot_metrics.py reads it) and `train.log` (the human-readable lines,
/// also echoed to the console). Both are appended to, so a resumed run continues them.
class RunLog {
 public:
  RunLog(const std::filesystem::path& run_dir, std::ostream& console);

  /// A human-readable line, time-stamped in the log file; echoed to the console unless
  /// `console` is false (a progress bar already shows it).
  void line(const std::string& text, bool console = true);
  /// A metrics record; `record["kind"]` says which (train / valid).
  void metrics(const nlohmann::json& record);
  /// The console stream (progress bars draw there).
  std::ostream& console() { return console_; }

 private:
  std::ofstream log_;
  std::ofstream metrics_;
  std::ostream& console_;
};

}  // namespace nmt
