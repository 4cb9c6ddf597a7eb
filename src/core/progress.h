#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nmt {

/// "00:12", "59:59", "1:02:03" (hours are not wrapped); "?" for a negative or non-finite value.
std::string format_duration(double seconds);

/// 2431 -> "2,431", -1234567 -> "-1,234,567".
std::string format_count(int64_t value);

/// One extra field on a progress line, e.g. {"loss", "4.12"}; the caller formats the value.
using ProgressField = std::pair<std::string, std::string>;

/// Everything one progress line shows; render_progress turns it into text.
struct ProgressSnapshot {
  std::string label;
  int64_t done = 0;
  int64_t total = 0;  ///< 0: unknown, no percentage, bar or ETA
  double elapsed_s = 0.0;
  std::vector<ProgressField> fields;
  int64_t initial = 0;  ///< done before elapsed_s started (a resumed epoch): not in the rate
};

/// The line, without \r or newline:
///   known total:   "label  37% |#####---------| 370/1000 loss 4.12 [00:12<00:21]"
///   unknown total: "label 370 loss 4.12 [00:12, 30.8/s]"
/// The ETA extrapolates the average rate so far: elapsed * (total - done) / (done - initial).
std::string render_progress(const ProgressSnapshot& snapshot, int bar_width = 30);

/// Options for ProgressBar; every field has a working default.
struct ProgressOptions {
  /// Terminal: redraw in place at most this often (done == total always draws).
  std::chrono::milliseconds redraw_interval{100};
  /// Not a terminal (CI log, file): one plain line this often, plus a final one from finish().
  /// Zero prints a line on every update.
  std::chrono::milliseconds line_interval{30'000};
  int bar_width = 30;
  /// Progress already made when the bar starts, e.g. the batches of a resumed epoch; it counts
  /// toward the percentage but not toward the rate and ETA.
  int64_t initial = 0;
  /// Whether `out` is a terminal; unset: true only for std::cout / std::cerr / std::clog whose
  /// file descriptor isatty().
  std::optional<bool> is_terminal;
  /// The clock (tests inject a fake one); unset: std::chrono::steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

/// A progress display for long loops (training steps, decoding a test set). On a terminal it
/// redraws one line in place with \r, throttled; otherwise it prints a plain line every
/// `line_interval` so logs stay readable. Not thread-safe: call it from the loop's thread.
class ProgressBar {
 public:
  /// `total` 0 means unknown. `out` must outlive the bar.
  ProgressBar(std::string label, int64_t total, std::ostream& out, ProgressOptions options = {});
  /// Calls finish() if it has not been called (no exception escapes).
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Records progress; draws if the throttle allows. `fields` replace the previous ones.
  void update(int64_t done, std::vector<ProgressField> fields = {});
  /// Prints `line` on its own line without garbling the bar (a terminal bar is redrawn below).
  void message(const std::string& line);
  /// Prints the final state and a newline; later calls do nothing.
  void finish();

  /// The current line (as render_progress would draw it now).
  std::string line() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  TimePoint now() const;
  void draw_in_place();
  void print_line();

  std::ostream& out_;
  ProgressOptions options_;
  bool terminal_;
  size_t columns_ = 0;  // terminal width; 0: unknown, lines are not truncated
  ProgressSnapshot snapshot_;
  TimePoint start_;
  TimePoint last_draw_;
  bool drawn_ = false;     // something has been drawn since the last newline (terminal)
  size_t last_width_ = 0;  // length of the line drawn in place, to blank leftovers
  bool finished_ = false;
};

}  // namespace nmt
