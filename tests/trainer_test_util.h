#pragma once

// Helpers shared by the trainer tests (test_trainer.cpp, test_trainer_loop.cpp): runs of the
// tiny config and readers of their metrics.jsonl.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "test_util.h"
#include "train/trainer.h"

namespace nmt::test {

namespace fs = std::filesystem;

/// One field of the train records (one per logged step) of a run's metrics.jsonl.
/// `key` of each metrics.jsonl record of `kind` (train, valid), in order.
inline std::vector<double> series(const fs::path& run_dir, const std::string& kind,
                                  const std::string& key) {
  std::vector<double> values;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record["kind"] == kind) values.push_back(record[key].get<double>());
  }
  return values;
}

inline std::vector<double> train_series(const fs::path& run_dir, const std::string& key) {
  return series(run_dir, "train", key);
}

inline std::vector<double> train_losses(const fs::path& run_dir) {
  return train_series(run_dir, "loss");
}

/// tiny_config with a step limit instead of the one-epoch limit.
inline Config step_config(const fs::path& run_dir, int64_t max_steps) {
  Config config = tiny_config(run_dir);
  config.train.max_epochs = 0;
  config.train.max_steps = max_steps;
  return config;
}

inline TrainSummary train(const Config& config, bool resume = false) {
  std::ostringstream console;
  Trainer trainer(config, resume, console);
  return trainer.run();
}

/// Trains `config` to `stop_at` steps, then resumes it to its own max_steps.
inline void train_stopped_and_resumed(Config config, int64_t stop_at) {
  const int64_t steps = config.train.max_steps;
  config.train.max_steps = stop_at;
  EXPECT_EQ(train(config).steps, stop_at);
  config.train.max_steps = steps;
  EXPECT_EQ(train(config, /*resume=*/true).steps, steps);
}

/// Trains `whole`, and a copy of it in `halves_dir` stopped at `stop_at` and resumed; expects the
/// two loss curves to be bit-identical with max_steps records, and returns the whole run's.
inline std::vector<double> expect_resume_reproduces(const Config& whole, const fs::path& halves_dir,
                                                    int64_t stop_at) {
  train(whole);
  Config halves = whole;
  halves.train.run_dir = halves_dir.string();
  train_stopped_and_resumed(halves, stop_at);
  const auto expected = train_losses(whole.train.run_dir);
  EXPECT_EQ(expected.size(), size_t(whole.train.max_steps));
  EXPECT_EQ(train_losses(halves_dir), expected);  // bit-identical on CPU
  return expected;
}

/// Every record of `kind` (train, valid) of a run's metrics.jsonl, in order.
inline std::vector<nlohmann::json> records(const fs::path& run_dir, const std::string& kind) {
  std::vector<nlohmann::json> out;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record["kind"] == kind) out.push_back(std::move(record));
  }
  return out;
}

}  // namespace nmt::test
