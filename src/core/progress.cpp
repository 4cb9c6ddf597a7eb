#include "core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace nmt {
namespace {

/// The file descriptor behind `out` if it is one of the standard streams, else -1.
int standard_fd(const std::ostream& out) {
  const std::streambuf* buffer = out.rdbuf();
  if (buffer == std::cout.rdbuf()) return STDOUT_FILENO;
  if (buffer == std::cerr.rdbuf() || buffer == std::clog.rdbuf()) return STDERR_FILENO;
  return -1;
}

/// Width of the terminal on `fd`, or 0 if unknown (then lines are not truncated).
size_t terminal_columns(int fd) {
  winsize size{};
  if (fd < 0 || ::ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second)) return "?/s";
  if (per_second >= 1000) return format_count(std::llround(per_second)) + "/s";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f/s", per_second);
  return buffer;
}

/// "37% |#####---------| 370/1000" for a known total.
std::string render_bar(int64_t done, int64_t total, int bar_width) {
  const int64_t clamped = std::clamp<int64_t>(done, 0, total);
  const auto fraction = static_cast<double>(clamped) / static_cast<double>(total);
  const int percent = static_cast<int>(std::floor(100.0 * fraction));
  const int filled = static_cast<int>(std::floor(bar_width * fraction));
  char percent_text[8];
  std::snprintf(percent_text, sizeof(percent_text), "%3d%%", percent);
  return std::string(percent_text) + " |" + std::string(filled, '#') +
         std::string(bar_width - filled, '-') + "| " + std::to_string(done) + "/" +
         std::to_string(total);
}

/// Remaining time at the average rate so far; negative (shown as "?") before any progress.
double estimate_remaining_s(const ProgressSnapshot& snapshot) {
  const int64_t remaining = std::max<int64_t>(snapshot.total - snapshot.done, 0);
  const int64_t progressed = snapshot.done - snapshot.initial;
  if (remaining == 0) return 0.0;
  if (progressed <= 0) return -1.0;
  return snapshot.elapsed_s * static_cast<double>(remaining) / static_cast<double>(progressed);
}

}  // namespace

std::string format_duration(double seconds) {
  // Beyond ~300 million years the cast to long long would overflow; such an ETA means "unknown".
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e16) return "?";
  const auto total = static_cast<long long>(seconds);
  const long long hours = total / 3600, minutes = total % 3600 / 60, secs = total % 60;
  char buffer[48];
  if (hours > 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", hours, minutes, secs);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld", minutes, secs);
  }
  return buffer;
}

std::string format_count(int64_t value) {
  // Unsigned magnitude so that INT64_MIN does not overflow.
  const bool negative = value < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : value;
  const std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string render_progress(const ProgressSnapshot& snapshot, int bar_width) {
  std::string line = snapshot.label;
  const auto append = [&line](const std::string& part) {
    if (!line.empty()) line += ' ';
    line += part;
  };
  if (snapshot.total > 0) {
    append(render_bar(snapshot.done, snapshot.total, std::max(bar_width, 0)));
  } else {
    append(std::to_string(snapshot.done));
  }
  for (const auto& [key, value] : snapshot.fields) append(key + " " + value);
  const std::string elapsed = format_duration(snapshot.elapsed_s);
  if (snapshot.total > 0) {
    append("[" + elapsed + "<" + format_duration(estimate_remaining_s(snapshot)) + "]");
  } else {
    const double rate =
        snapshot.elapsed_s > 0
            ? static_cast<double>(snapshot.done - snapshot.initial) / snapshot.elapsed_s
            : std::nan("");
    append("[" + elapsed + ", " + format_rate(rate) + "]");
  }
  return line;
}

ProgressBar::ProgressBar(std::string label, int64_t total, std::ostream& out,
                         ProgressOptions options)
    : out_(out), options_(std::move(options)) {
  const int fd = standard_fd(out_);
  terminal_ = options_.is_terminal.value_or(fd >= 0 && ::isatty(fd) == 1);
  columns_ = terminal_ ? terminal_columns(fd) : 0;
  snapshot_.label = std::move(label);
  snapshot_.total = std::max<int64_t>(total, 0);
  snapshot_.done = options_.initial;
  snapshot_.initial = options_.initial;
  start_ = now();
  last_draw_ = start_;
}

ProgressBar::~ProgressBar() {
  try {
    finish();
  } catch (...) {
    // A destructor must not throw; a failed final write is not worth terminating for.
  }
}

ProgressBar::TimePoint ProgressBar::now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

std::string ProgressBar::line() const {
  ProgressSnapshot snapshot = snapshot_;
  snapshot.elapsed_s = std::chrono::duration<double>(now() - start_).count();
  return render_progress(snapshot, options_.bar_width);
}

void ProgressBar::update(int64_t done, std::vector<ProgressField> fields) {
  if (finished_) return;
  snapshot_.done = done;
  snapshot_.fields = std::move(fields);
  const TimePoint t = now();
  if (terminal_) {
    const bool complete = snapshot_.total > 0 && done >= snapshot_.total;
    if (!drawn_ || complete || t - last_draw_ >= options_.redraw_interval) {
      draw_in_place();
      last_draw_ = t;
    }
  } else if (t - last_draw_ >= options_.line_interval) {
    print_line();
    last_draw_ = t;
  }
}

void ProgressBar::message(const std::string& text) {
  if (terminal_ && drawn_) {
    out_ << '\r' << std::string(last_width_, ' ') << '\r' << text << '\n';
    last_width_ = 0;
    draw_in_place();
  } else {
    out_ << text << '\n' << std::flush;
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (terminal_) {
    draw_in_place();
    out_ << '\n' << std::flush;
  } else {
    print_line();
  }
}

void ProgressBar::draw_in_place() {
  std::string text = line();
  if (columns_ > 1 && text.size() >= columns_) text.resize(columns_ - 1);  // never wrap
  out_ << '\r' << text;
  if (text.size() < last_width_) out_ << std::string(last_width_ - text.size(), ' ');
  out_ << std::flush;
  last_width_ = text.size();
  drawn_ = true;
}

void ProgressBar::print_line() { out_ << line() << '\n' << std::flush; }

}  // namespace nmt
