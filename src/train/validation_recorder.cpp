#include "train/validation_recorder.h"

#include <cmath>
#include <cstdio>

namespace nmt {
namespace {

nlohmann::json or_null(double value) {
  return std::isnan(value) ? nlohmann::json() : nlohmann::json(value);
}

std::string shown(const ScoreSpec& spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", spec.digits, value);
  return spec.label + " " + buffer;
}

}  // namespace

void ValidationRecorder::write(nlohmann::json record, const std::string& head, const Scores& mean,
                               const std::vector<NamedScores>& sets,
                               const std::string& tail) const {
  std::string line = head;
  for (const auto& spec : specs_) {
    const double value = mean.get(spec.key);
    record[spec.key] = or_null(value);
    if (!std::isnan(value)) line += " | " + shown(spec, value);
  }
  for (const auto& [name, scores] : sets) {
    for (const auto& spec : specs_) {
      record[spec.key + "_" + name] = or_null(scores->get(spec.key));
      if (spec.key == headline_) line += " | " + name + " " + shown(spec, scores->get(spec.key));
    }
  }
  record["seconds"] = mean.seconds;
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "%.1f", mean.seconds);
  log_.metrics(record);
  log_.say(line + " | " + seconds + " s" + tail);
}

}  // namespace nmt
