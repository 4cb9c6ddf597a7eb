#pragma once

// `nmt serve`'s GET /metrics: counters and histograms in Prometheus' text format (version
// 0.0.4). Labels are from fixed sets (the routes, the statuses answered, the rejection
// reasons), never from what a client sends, and no key or text is ever a label.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nmt {

/// A Prometheus histogram: counts of observations at or below each bound, their sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  /// The _bucket, _sum and _count lines of `name`.
  std::string text(const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  ///< per bound, not cumulative; the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

/// What /metrics reads at the moment it is asked.
struct MetricsGauges {
  int64_t queued = 0;       ///< requests waiting to be decoded
  int64_t decoding = 0;     ///< batches being decoded
  int64_t connections = 0;  ///< open connections
  int64_t busy = 0;         ///< request threads at work
};

class ServeMetrics {
 public:
  ServeMetrics();
  /// A response: its route ("other" for a path that is none), status and texts.
  void answered(const std::string& route, int status, int64_t texts);
  /// Seconds from a whole POST request to its answer.
  void latency(const std::string& route, double seconds);
  /// A connection or request turned away: "idle", "header_deadline", "rate", "key", ...
  void rejected(const std::string& reason);
  /// A batch decoded: its texts and seconds.
  void batch(int64_t texts, double seconds);
  std::string text(const MetricsGauges& gauges) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::pair<std::string, int>, int64_t> texts_;
  std::map<std::string, int64_t> rejected_;
  Histogram batch_texts_;
  Histogram decode_seconds_;
  std::map<std::string, Histogram> request_seconds_;
};

}  // namespace nmt
