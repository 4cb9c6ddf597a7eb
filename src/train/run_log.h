#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/progress.h"

namespace nmt {

/// `value` with `digits` decimals, for log lines.
std::string fixed(double value, int digits);

/// The records a run leaves behind: `metrics.jsonl` (one JSON object per log interval and per
/// validation; scripts/plot_metrics.py reads it) and `train.log` (the human-readable lines,
/// also echoed to the console). Both are appended to, so a resumed run continues them (after
/// tidy_run_dir has cut them back to its checkpoint).
class RunLog {
 public:
  RunLog(const std::filesystem::path& run_dir, std::ostream& console);
  /// A log without files, lines to `console` only: the ranks other than 0 of a multi-process
  /// run (rank 0 alone writes the run's records).
  explicit RunLog(std::ostream& console);

  /// A human-readable line, time-stamped in the log file; echoed to the console unless
  /// `console` is false (a progress bar already shows it).
  void line(const std::string& text, bool console = true);
  /// A line while a progress bar may be drawn: into the log file, and printed above the bar
  /// (show_bar) so that it does not garble it; without a bar, line(text).
  void say(const std::string& text);
  /// A metrics record; `record["kind"]` says which (train / valid).
  void metrics(const nlohmann::json& record);
  /// Current sizes of train.log and metrics.jsonl in bytes (everything written is flushed).
  int64_t log_bytes() const;
  int64_t metrics_bytes() const;
  /// The console stream (progress bars draw there).
  std::ostream& console() { return console_; }
  /// The epoch's progress bar, drawn on the console (terminal only); null: none.
  void show_bar(std::unique_ptr<ProgressBar> bar) { bar_ = std::move(bar); }
  ProgressBar* bar() const { return bar_.get(); }
  /// Finishes the bar and removes it.
  void end_bar();

 private:
  std::filesystem::path log_path_;
  std::filesystem::path metrics_path_;
  std::ofstream log_;
  std::ofstream metrics_;
  std::ostream& console_;
  std::unique_ptr<ProgressBar> bar_;
};

}  // namespace nmt
