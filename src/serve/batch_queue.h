#pragma once

// The batching queue of `nmt serve`: HTTP threads submit requests (lists of lines with their
// decoding options); decoding workers (threads that share the model, only reading it) each take
// the oldest request together with the requests queued after it that have the same options, up
// to a token budget, waiting a short time for more to arrive, and translate them in one
// Translator call. With several workers, several batches are decoded at once (CTranslate2's
// inter_threads): on a CPU, two single-threaded batches use two cores better than one batch
// split over both when batches are small, as they are under concurrency.

#include <ATen/ATen.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "data/language_tags.h"
#include "data/tokenizer.h"
#include "decode/translator.h"
#include "model/seq2seq.h"

namespace nmt {

/// How requests are batched.
struct BatchOptions {
  /// Tokens of the queued requests decoded together, counted as decode.batch_tokens counts them
  /// but before padding (the translator sorts and pads): each text weighs (pieces + eos) × its
  /// rows, the beam or the samples (request_tokens). A request above the budget on its own is
  /// decoded alone. Within a batch decode.batch_tokens still splits the model calls, as in
  /// `nmt translate`.
  int64_t max_batch_tokens = 4096;
  /// How long the oldest queued request may wait for others before its batch is decoded (the
  /// decoder starts at once when the budget is full; while it decodes, requests queue anyway).
  std::chrono::milliseconds max_wait{5};
  size_t capacity = 256;                   ///< requests waiting; one more is refused (503)
  Precision precision = Precision::kFp32;  ///< autocast is per thread
  int64_t workers = 1;                     ///< decoding threads, each decoding one batch at a time
  int64_t threads = 0;  ///< intra-op threads of each decoding thread (0: leave as is)
  LanguageTags tags;    ///< a multilingual model's tags; each line names its target language
  /// Called after each batch is decoded with its texts and seconds (the server's metrics).
  std::function<void(int64_t texts, double seconds)> on_batch;
};

/// Counters for /health and tests.
struct BatchStats {
  int64_t requests = 0;       ///< requests answered
  int64_t texts = 0;          ///< texts translated
  int64_t batches = 0;        ///< Translator calls
  int64_t queued = 0;         ///< requests waiting now
  int64_t decoding = 0;       ///< batches being decoded now
  int64_t peak_decoding = 0;  ///< most batches decoded at once so far
};

/// What a request weighs against BatchOptions::max_batch_tokens: the sum over its lines that
/// need the model of (pieces + eos) × decode.candidates().
int64_t request_tokens(const std::vector<SourceLine>& lines, const DecodeConfig& decode);

class BatchQueue {
 public:
  /// Starts the decoding threads (options.workers, at least 1).
  BatchQueue(Ensemble model, Tokenizer tokenizer, at::Device device, BatchOptions options);
  /// Closes the queue (what is queued is still translated) and joins the threads.
  ~BatchQueue();
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  /// Queues `lines` (encode_line's: each text is tokenized once) for translation with `decode`
  /// (validated); the future holds one result per line (or the exception decoding threw).
  /// Throws RequestError 503 when the queue is full or closed.
  std::future<std::vector<TranslationResult>> submit(std::vector<SourceLine> lines,
                                                     const DecodeConfig& decode);

  /// From now on batches are decoded without waiting for more requests (shutting down: what
  /// is queued should be answered soon); requests are still accepted.
  void flush();

  /// Refuses new requests, translates the queued ones, joins the decoding threads. Idempotent.
  void close();

  BatchStats stats() const;

 private:
  struct Job {
    std::vector<SourceLine> lines;
    DecodeConfig decode;
    int64_t tokens = 0;  ///< request_tokens, for the budget
    std::chrono::steady_clock::time_point arrival;
    std::promise<std::vector<TranslationResult>> done;
  };

  /// A decoding thread: one Translator, given each batch's options in turn.
  void run();
  /// Waits for the next batch (empty: closed and drained) and takes it off the queue. Safe
  /// with several workers waiting: the one that takes a batch first gets it, the others wait on.
  std::vector<std::unique_ptr<Job>> next_batch();
  /// Source tokens queued with the same options as the oldest request.
  int64_t compatible_tokens() const;
  void decode(Translator& translator, std::vector<std::unique_ptr<Job>>& batch);

  Ensemble model_;
  Tokenizer tokenizer_;
  at::Device device_;
  BatchOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> queue_;
  bool closed_ = false;
  bool flush_ = false;
  BatchStats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace nmt
