#include "train/resume.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

int64_t count_lines(const std::string& text) {
  return int64_t(std::count(text.begin(), text.end(), '\n')) +
         (text.empty() || text.back() == '\n' ? 0 : 1);
}

/// Cuts `path` back to `size` bytes; reports what went.
void cut_to(const fs::path& path, int64_t size, const char* unit, RunDirReport& report) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  const auto now = int64_t(fs::file_size(path));
  if (now < size) {
    report.found.push_back(path.filename().string() + " is shorter than recorded (" +
                           std::to_string(now) + " < " + std::to_string(size) + " bytes)");
    return;
  }
  if (now == size) return;
  const std::string tail = read_all(path).substr(size_t(size));
  fs::resize_file(path, uintmax_t(size));
  report.discarded.push_back(path.filename().string() + ": " + std::to_string(count_lines(tail)) +
                             " " + unit + " written after the checkpoint");
}

/// Older checkpoints recorded no log sizes: drops the metrics records past `step`.
void drop_metrics_after(const fs::path& path, int64_t step, RunDirReport& report) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  std::istringstream in(read_all(path));
  std::string kept, line;
  int64_t dropped = 0;
  while (std::getline(in, line)) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("step", int64_t(0)) <= step) {
      kept += line + "\n";
    } else {
      ++dropped;
    }
  }
  if (dropped == 0) return;
  write_file_atomically(path, kept, "metrics log");
  report.discarded.push_back(path.filename().string() + ": " + std::to_string(dropped) +
                             " records past step " + std::to_string(step));
}

/// Step of a checkpoint file, or -1 when it cannot be read.
int64_t step_of(const fs::path& path) {
  try {
    return read_checkpoint_state(path).step;
  } catch (const Error&) {
    return -1;
  }
}

/// Makes best.pt hold the weights of `last.best_step` (see tidy_run_dir).
void check_best(const fs::path& run_dir, const TrainingState& last, RunDirReport& report) {
  const fs::path best = run_dir / "best.pt";
  std::error_code ec;
  const int64_t best_step = fs::exists(best, ec) ? step_of(best) : -1;
  if (best_step >= 0) report.found.push_back("best.pt (step " + std::to_string(best_step) + ")");
  const bool has_best = !std::isnan(last.best_metric);
  if (has_best ? best_step == last.best_step : best_step < 0) return;
  if (best_step >= 0 && (best_step > last.step || !has_best)) {
    fs::remove(best);
    report.discarded.push_back("best.pt (step " + std::to_string(best_step) +
                               ", beyond the checkpoint)");
  }
  if (!has_best) return;
  const fs::path step_file = run_dir / ("step_" + std::to_string(last.best_step) + ".pt");
  if (last.best_step == last.step) {
    report.rewrite_best = true;
  } else if (fs::exists(step_file, ec)) {
    write_file_atomically(best, read_all(step_file), "checkpoint");
    report.found.push_back("best.pt restored from " + step_file.filename().string());
  } else {
    report.found.push_back("warning: best.pt does not hold step " + std::to_string(last.best_step) +
                           " (the best) and no copy is left");
  }
}

}  // namespace

RunDirReport tidy_run_dir(const fs::path& run_dir, const TrainingState& last) {
  RunDirReport report;
  std::map<fs::path, int64_t> steps;  // step_N.pt -> N
  for (const auto& [step, path] : numbered_files(run_dir, "step")) steps[path] = step;
  std::vector<fs::path> entries, stale;
  for (const auto& entry : fs::directory_iterator(run_dir)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());  // the report lists files in name order
  for (const auto& path : entries) {
    const std::string name = path.filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      stale.push_back(path);
      report.discarded.push_back(name + " (stale temporary file)");
    } else if (const auto step = steps.find(path); step != steps.end()) {
      if (step->second > last.step) {
        stale.push_back(path);
        report.discarded.push_back(name + " (beyond the checkpoint)");
      } else {
        report.found.push_back(name);
      }
    }
  }
  for (const auto& path : stale) fs::remove(path);
  check_best(run_dir, last, report);
  if (last.metrics_bytes >= 0) {
    cut_to(run_dir / "metrics.jsonl", last.metrics_bytes, "records", report);
  } else {
    drop_metrics_after(run_dir / "metrics.jsonl", last.step, report);
  }
  if (last.log_bytes >= 0) cut_to(run_dir / "train.log", last.log_bytes, "lines", report);
  sync_directory(run_dir);
  return report;
}

}  // namespace nmt
