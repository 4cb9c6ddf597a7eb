#include "train/validation_recorder.h"

#include <cmath>

namespace nmt {
namespace {

nlohmann::json or_null(double value) {
  return std::isnan(value) ? nlohmann::json() : nlohmann::json(value);
}

std::string shown(const ScoreSpec& spec, double value) {
  return spec.label + " " + fixed(value, spec.digits);
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
  log_.metrics(record);
  log_.say(line + " | " + fixed(mean.seconds, 1) + " s" + tail);
}

}  // namespace nmt
