#include "train/run_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iomanip>

#include "core/error.h"

namespace nmt {
namespace {

std::string timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  std::ostringstream s;
  s << std::put_time(&local, "%Y-%m-%d %H:%M:%S");
  return s.str();
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& run_dir, std::ostream& console)
    : log_path_(run_dir / "train.log"),
      metrics_path_(run_dir / "metrics.jsonl"),
      log_(log_path_, std::ios::app),
      metrics_(metrics_path_, std::ios::app),
      console_(console) {
  if (!log_ || !metrics_) {
    throw Error((run_dir / "train.log").string() + ": cannot open the run's log files for writing");
  }
}

RunLog::RunLog(std::ostream& console) : console_(console) {}

void RunLog::line(const std::string& text, bool console) {
  if (console) console_ << text << std::endl;
  if (log_.is_open()) log_ << timestamp() << "  " << text << std::endl;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

void RunLog::say(const std::string& text) {
  if (!bar_) return line(text);
  line(text, /*console=*/false);
  bar_->message(text);
}

void RunLog::end_bar() {
  if (bar_) bar_->finish();
  bar_.reset();
}

int64_t RunLog::log_bytes() const {
  if (log_path_.empty()) return 0;
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_path_, ec);
  return ec ? 0 : int64_t(size);
}

int64_t RunLog::metrics_bytes() const {
  if (metrics_path_.empty()) return 0;
  std::error_code ec;
  const auto size = std::filesystem::file_size(metrics_path_, ec);
  return ec ? 0 : int64_t(size);
}

void RunLog::metrics(const nlohmann::json& record) {
  if (metrics_.is_open()) metrics_ << record.dump() << std::endl;
}

}  // namespace nmt
