#include "serve/metrics.h"

#include <cstdio>
#include <sstream>

namespace nmt {
namespace {

/// Rejection reasons shown from the start (at 0), so that a rate can be taken of each.
const char* const kReasons[] = {"idle",        "header_deadline",    "body_deadline", "admission",
                                "connections", "client_connections", "tls_handshake", "rate",
                                "key"};
const char* const kRoutes[] = {"/translate", "/score", "/attention"};

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

void header(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

std::vector<double> seconds_bounds() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i] += 1;
  sum_ += value;
  count_ += 1;
}

std::string Histogram::text(const std::string& name) const {
  // `name` may carry labels: nmt_request_seconds{route="/translate"} -> le is added to them.
  const auto brace = name.find('{');
  const std::string base = name.substr(0, brace);
  const std::string labels =
      brace == std::string::npos ? "" : name.substr(brace + 1, name.size() - brace - 2) + ",";
  const std::string own = brace == std::string::npos ? "" : name.substr(brace);
  std::ostringstream out;
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    out << base << "_bucket{" << labels << "le=\""
        << (i < bounds_.size() ? number(bounds_[i]) : "+Inf") << "\"} " << cumulative << '\n';
  }
  out << base << "_sum" << own << ' ' << number(sum_) << '\n';
  out << base << "_count" << own << ' ' << count_ << '\n';
  return out.str();
}

ServeMetrics::ServeMetrics()
    : batch_texts_({1, 2, 4, 8, 16, 32, 64, 128, 256, 512}), decode_seconds_(seconds_bounds()) {
  for (const char* reason : kReasons) rejected_[reason] = 0;
  for (const char* route : kRoutes) request_seconds_.emplace(route, Histogram(seconds_bounds()));
}

void ServeMetrics::answered(const std::string& route, int status, int64_t texts) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_[{route, status}] += 1;
  texts_[{route, status}] += texts;
}

void ServeMetrics::latency(const std::string& route, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = request_seconds_.find(route);
  if (it != request_seconds_.end()) it->second.observe(seconds);
}

void ServeMetrics::rejected(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  rejected_[reason] += 1;
}

void ServeMetrics::batch(int64_t texts, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  batch_texts_.observe(double(texts));
  decode_seconds_.observe(seconds);
}

std::string ServeMetrics::text(const MetricsGauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  header(out, "nmt_http_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, count] : requests_) {
    out << "nmt_http_requests_total{route=\"" << key.first << "\",status=\"" << key.second << "\"} "
        << count << '\n';
  }
  header(out, "nmt_http_texts_total", "counter",
         "Texts in the requests answered, by route and status.");
  for (const auto& [key, count] : texts_) {
    out << "nmt_http_texts_total{route=\"" << key.first << "\",status=\"" << key.second << "\"} "
        << count << '\n';
  }
  header(out, "nmt_rejected_total", "counter",
         "Connections and requests turned away before a handler answered them, by reason.");
  for (const auto& [reason, count] : rejected_) {
    out << "nmt_rejected_total{reason=\"" << reason << "\"} " << count << '\n';
  }
  header(out, "nmt_queue_depth", "gauge", "Requests waiting to be decoded.");
  out << "nmt_queue_depth " << gauges.queued << '\n';
  header(out, "nmt_batches_decoding", "gauge", "Batches being decoded now.");
  out << "nmt_batches_decoding " << gauges.decoding << '\n';
  header(out, "nmt_connections", "gauge", "Open HTTP connections.");
  out << "nmt_connections " << gauges.connections << '\n';
  header(out, "nmt_http_threads_busy", "gauge", "Request threads at work.");
  out << "nmt_http_threads_busy " << gauges.busy << '\n';
  header(out, "nmt_batch_texts", "histogram", "Texts decoded together in one batch.");
  out << batch_texts_.text("nmt_batch_texts");
  header(out, "nmt_decode_seconds", "histogram", "Seconds to decode one batch.");
  out << decode_seconds_.text("nmt_decode_seconds");
  header(out, "nmt_request_seconds", "histogram",
         "Seconds from a whole request to its answer (queue and decoding), by route.");
  for (const auto& [route, histogram] : request_seconds_) {
    out << histogram.text("nmt_request_seconds{route=\"" + route + "\"}");
  }
  return out.str();
}

}  // namespace nmt
