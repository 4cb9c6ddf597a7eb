#include "serve/batch_queue.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <string>
#include <utility>

#include "core/device.h"
#include "core/error.h"
#include "core/precision.h"
#include "serve/request.h"

namespace nmt {

int64_t request_tokens(const std::vector<SourceLine>& lines, const DecodeConfig& decode) {
  int64_t tokens = 0;
  for (const auto& line : lines) {
    if (line.needs_model()) tokens += static_cast<int64_t>(line.ids.size()) + 1;  // + eos
  }
  return tokens * decode.candidates();
}

BatchQueue::BatchQueue(Ensemble model, Tokenizer tokenizer, at::Device device, BatchOptions options)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      device_(device),
      options_(std::move(options)) {
  options_.workers = std::max<int64_t>(options_.workers, 1);
  // The workers share the model and must only read it: eval() now, before they exist.
  for (size_t i = 0; i < model_.size(); ++i) {
    if (model_.member(i)->is_training()) model_.member(i)->eval();
  }
  workers_.reserve(size_t(options_.workers));
  try {
    for (int64_t w = 0; w < options_.workers; ++w) workers_.emplace_back([this] { run(); });
  } catch (const std::exception& e) {
    close();  // joins the workers already started
    throw Error("nmt serve: could not start decoding worker " +
                std::to_string(workers_.size() + 1) + " of " + std::to_string(options_.workers) +
                " (" + e.what() + "); use fewer --workers");
  }
}

BatchQueue::~BatchQueue() { close(); }

std::future<std::vector<TranslationResult>> BatchQueue::submit(std::vector<SourceLine> lines,
                                                               const DecodeConfig& decode) {
  auto job = std::make_unique<Job>();
  job->tokens = request_tokens(lines, decode);
  job->lines = std::move(lines);
  job->decode = decode;
  job->arrival = std::chrono::steady_clock::now();
  auto future = job->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw RequestError(503, "the server is shutting down");
    if (queue_.size() >= options_.capacity) {
      throw RequestError(503, "the queue is full (" + std::to_string(options_.capacity) +
                                  " requests waiting, --queue); retry later");
    }
    queue_.push_back(std::move(job));
  }
  changed_.notify_one();  // any idle worker will do
  return future;
}

void BatchQueue::flush() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_ = true;
  }
  changed_.notify_all();
}

void BatchQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

BatchStats BatchQueue::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  BatchStats stats = stats_;
  stats.queued = static_cast<int64_t>(queue_.size());
  return stats;
}

void BatchQueue::run() {
  // Autocast and OpenMP's thread count are per thread: set them where the model runs.
  if (options_.threads > 0) set_thread_intra_op_threads(options_.threads);
  AutocastGuard autocast(options_.precision, device_);
  Translator translator(model_, tokenizer_, DecodeConfig{}, device_);
  translator.set_log(nullptr);                 // warnings go back to the client in the response
  translator.set_language(options_.tags, "");  // each line carries its target language
  for (auto batch = next_batch(); !batch.empty(); batch = next_batch()) decode(translator, batch);
}

int64_t BatchQueue::compatible_tokens() const {
  int64_t tokens = 0;
  for (const auto& job : queue_) {
    if (job->decode == queue_.front()->decode) tokens += job->tokens;
  }
  return tokens;
}

std::vector<std::unique_ptr<BatchQueue::Job>> BatchQueue::next_batch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) return {};
    // Sampling draws from one generator per call: batching other requests with it
    // would change its samples, so a sampling request is decoded on its own.
    const auto ready = [this] {
      return closed_ || flush_ || queue_.front()->decode.samples() ||
             compatible_tokens() >= options_.max_batch_tokens;
    };
    const auto deadline = queue_.front()->arrival + options_.max_wait;
    while (!ready() && changed_.wait_until(lock, deadline) != std::cv_status::timeout &&
           !queue_.empty()) {
    }
    // Another worker may have taken the requests meanwhile (or some of them: the oldest left
    // then has a deadline of its own).
    if (!queue_.empty() && (ready() || std::chrono::steady_clock::now() >=
                                           queue_.front()->arrival + options_.max_wait)) {
      break;
    }
  }
  const bool alone = queue_.front()->decode.samples();
  std::vector<std::unique_ptr<Job>> batch;
  int64_t tokens = 0;
  const DecodeConfig decode = queue_.front()->decode;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if ((*it)->decode != decode) {
      ++it;  // other options wait for a batch of their own, in arrival order
      continue;
    }
    if (!batch.empty() && (alone || tokens + (*it)->tokens > options_.max_batch_tokens)) break;
    tokens += (*it)->tokens;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  stats_.decoding += 1;
  stats_.peak_decoding = std::max(stats_.peak_decoding, stats_.decoding);
  // What is left may be ready too (a full budget, a passed deadline): an idle worker takes it.
  const bool more = !queue_.empty();
  lock.unlock();
  if (more) changed_.notify_one();
  return batch;
}

void BatchQueue::decode(Translator& translator, std::vector<std::unique_ptr<Job>>& batch) {
  std::vector<SourceLine> lines;
  for (auto& job : batch) {
    std::move(job->lines.begin(), job->lines.end(), std::back_inserter(lines));
  }
  const size_t texts = lines.size();
  std::vector<TranslationResult> results;
  const auto start = std::chrono::steady_clock::now();
  try {
    results = translator.translate_encoded(std::move(lines), batch.front()->decode);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.batches += 1;
      stats_.decoding -= 1;
    }
    for (auto& job : batch) job->done.set_exception(std::current_exception());
    return;
  }
  {  // counted before the answers go out: a client that has its answer sees it counted
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.batches += 1;
    stats_.decoding -= 1;
    stats_.requests += static_cast<int64_t>(batch.size());
    stats_.texts += static_cast<int64_t>(texts);
  }
  if (options_.on_batch) {
    options_.on_batch(
        static_cast<int64_t>(texts),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  auto next = results.begin();
  for (auto& job : batch) {
    const auto end = next + static_cast<std::ptrdiff_t>(job->lines.size());
    job->done.set_value(std::vector<TranslationResult>(std::make_move_iterator(next),
                                                       std::make_move_iterator(end)));
    next = end;
  }
}

}  // namespace nmt
