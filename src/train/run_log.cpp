#include "train/run_log.h"

#include <chrono>
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
    : log_(run_dir / "train.log", std::ios::app),
      metrics_(run_dir / "metrics.jsonl", std::ios::app),
      console_(console) {
  if (!log_ || !metrics_) {
    throw Error((run_dir / "train.log").string() + ": cannot open the run's log files for writing");
  }
}

void RunLog::line(const std::string& text, bool console) {
  if (console) console_ << text << std::endl;
  log_ << timestamp() << "  " << text << std::endl;
}

void RunLog::metrics(const nlohmann::json& record) { metrics_ << record.dump() << std::endl; }

}  // namespace nmt
