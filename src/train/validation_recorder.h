#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/run_log.h"
#include "train/validation.h"

namespace nmt {

/// Writes what a validation measured, the metrics record and the log line, from its scores:
/// each of the run's validation reports (every validation, the final average's) has one shape,
/// and a new validator's values appear in both without a change here.
class ValidationRecorder {
 public:
  /// `specs`: the run's validators' (specs_of); `headline`: the key each further set shows in
  /// the log line (train.metric's). `log` must outlive the recorder.
  ValidationRecorder(RunLog& log, std::vector<ScoreSpec> specs, std::string headline)
      : log_(log), specs_(std::move(specs)), headline_(std::move(headline)) {}

  /// One set's scores beside the mean, under its name ("val.en-fr", a monitor split).
  using NamedScores = std::pair<std::string, const Scores*>;

  /// Writes `record` (its "kind", "step" and the caller's own fields) with every spec's value
  /// (null where not measured), each set's as "<key>_<set>", and "seconds"; and the line
  /// "<head> | loss 2.1234 | ppl 8.37 | BLEU 30.12 | chrF 55.01 | <set> BLEU 29.80 | 12.3 s<tail>".
  void write(nlohmann::json record, const std::string& head, const Scores& mean,
             const std::vector<NamedScores>& sets = {}, const std::string& tail = "") const;

 private:
  RunLog& log_;
  std::vector<ScoreSpec> specs_;
  std::string headline_;
};

}  // namespace nmt
