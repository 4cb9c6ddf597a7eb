#pragma once

// Who may use `nmt serve`, and how much (as LibreTranslate's --api-keys and --req-limit):
// - API keys from a file (--api-keys), each with an optional budget of requests and of
//   characters per minute; a request presents its key in `Authorization: Bearer KEY` or in the
//   JSON body's "api_key";
// - without keys, a budget of requests per minute per client address (--req-limit).
// Keys are compared in constant time (their SHA-256 digests, every key compared with
// CRYPTO_memcmp, no early exit) and never kept, logged or shown: a key is named by its line.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nmt {

using KeyDigest = std::array<unsigned char, 32>;

struct ApiKey {
  KeyDigest digest{};
  size_t line = 0;                    ///< where the key file has it (its name in messages)
  int64_t requests_per_minute = 0;    ///< 0: no limit
  int64_t characters_per_minute = 0;  ///< 0: no limit
};

/// Reads a key file: one key per line, optionally followed by its requests and characters per
/// minute (0: no limit); blank lines and lines starting with # are skipped. A key is 16 to 256
/// printable ASCII characters without spaces. Anything else is an nmt::Error naming the file
/// and the line.
std::vector<ApiKey> read_api_keys(const std::string& path);

/// A budget of `per_minute` units that refills continuously and holds at most a minute's worth.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double per_minute, Clock::time_point now);
  /// Takes `units`: 0 when taken, else the seconds until they could be (nothing is taken).
  double take(double units, Clock::time_point now);
  /// Whether the bucket has refilled (a caller idle for a minute): it may be forgotten.
  bool full(Clock::time_point now) const;

 private:
  double per_minute_;
  double units_;
  Clock::time_point last_;
};

struct AccessOptions {
  std::string key_file;             ///< --api-keys: "" serves without keys
  int64_t requests_per_minute = 0;  ///< --req-limit per client address without keys; 0: none
};

/// Who sent a request: a key or, without keys, an address.
struct Caller {
  std::string bucket;  ///< the budgets' name: "key:" + digest bytes, or "addr:" + address
  std::string name;    ///< for messages: "the key on line 3 of keys.txt", or the address
  int64_t requests_per_minute = 0;
  int64_t characters_per_minute = 0;
};

class AccessControl {
 public:
  /// Reads the key file when there is one (an nmt::Error naming its file and line).
  explicit AccessControl(AccessOptions options);

  bool keys_required() const { return !options_.key_file.empty(); }
  /// The caller of a request that presents `key` ("" for none) from `client`: with keys, a
  /// RequestError 401 when the key is missing or is none of them.
  Caller identify(const std::string& key, const std::string& client) const;
  /// Charges one request to the caller's budget: a RequestError 429 with the seconds to wait
  /// when it is spent.
  void charge_request(const Caller& caller);
  /// Charges `characters` to the caller's character budget (429 when spent; 413 when more than
  /// a minute's budget, which waiting cannot give).
  void charge_characters(const Caller& caller, int64_t characters);
  /// Reads the key file again (SIGHUP): "" when the new keys are in use, else why not (the old
  /// keys stay).
  std::string reload();
  size_t key_count() const;

 private:
  void charge(const std::string& bucket, int64_t per_minute, double units, const char* what,
              const std::string& name);

  AccessOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<ApiKey>> keys_;
  std::unordered_map<std::string, TokenBucket> buckets_;
};

/// The key a request presents: `Authorization: Bearer KEY` when the header is there (a
/// RequestError 401 when it is not of that form), else the JSON body's "api_key" string, else "".
std::string presented_key(const std::string& authorization, const std::string& body);

}  // namespace nmt
