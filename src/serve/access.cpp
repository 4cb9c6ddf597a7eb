#include "serve/access.h"

#if NMT_HAVE_HTTP  // OpenSSL comes with the HTTP server

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "serve/request.h"

namespace nmt {
namespace {

constexpr size_t kMinKeyLength = 16;
constexpr size_t kMaxKeyLength = 256;
/// Budgets of callers idle for a minute are forgotten once there are this many.
constexpr size_t kBucketsBeforePruning = 4096;

KeyDigest digest_of(const std::string& key) {
  KeyDigest digest{};
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  return digest;
}

int64_t budget_field(const std::string& word, const std::string& where, const char* what) {
  const bool digits =
      !word.empty() && word.size() <= 12 &&
      std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    throw Error(where + ": the " + what +
                " per minute must be a whole number >= 0 (0: no limit), not '" + word + "'");
  }
  return std::stoll(word);
}

}  // namespace

std::vector<ApiKey> read_api_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--api-keys " + path + ": cannot read the file");
  std::vector<ApiKey> keys;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream words(line);
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;
    const auto where = "--api-keys " + path + ":" + std::to_string(number);
    const bool printable =
        std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
    if (!printable || key.size() < kMinKeyLength || key.size() > kMaxKeyLength) {
      // The message never repeats the key: the file's line is its name.
      throw Error(where + ": a key must be " + std::to_string(kMinKeyLength) + " to " +
                  std::to_string(kMaxKeyLength) +
                  " printable ASCII characters without spaces (this one has " +
                  std::to_string(key.size()) + (printable ? "" : ", some not printable") +
                  "); format: KEY [REQUESTS_PER_MINUTE [CHARACTERS_PER_MINUTE]]");
    }
    ApiKey entry;
    entry.digest = digest_of(key);
    entry.line = number;
    std::string word;
    if (words >> word) entry.requests_per_minute = budget_field(word, where, "requests");
    if (words >> word) entry.characters_per_minute = budget_field(word, where, "characters");
    if (words >> word) {
      throw Error(where +
                  ": more than a key and two budgets (format: KEY [REQUESTS_PER_MINUTE "
                  "[CHARACTERS_PER_MINUTE]])");
    }
    for (const auto& other : keys) {
      if (other.digest == entry.digest) {
        throw Error(where + ": the same key as line " + std::to_string(other.line));
      }
    }
    keys.push_back(entry);
  }
  if (in.bad()) throw Error("--api-keys " + path + ": read error");
  if (keys.empty()) {
    throw Error(
        "--api-keys " + path +
        ": no keys in the file (one per line; to serve without keys, leave out --api-keys)");
  }
  return keys;
}

TokenBucket::TokenBucket(double per_minute, Clock::time_point now)
    : per_minute_(per_minute), units_(per_minute), last_(now) {}

double TokenBucket::take(double units, Clock::time_point now) {
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  units_ = std::min(per_minute_, units_ + elapsed * per_minute_ / 60.0);
  last_ = now;
  if (units_ >= units) {
    units_ -= units;
    return 0.0;
  }
  return (units - units_) * 60.0 / per_minute_;
}

bool TokenBucket::full(Clock::time_point now) const {
  return units_ + std::chrono::duration<double>(now - last_).count() * per_minute_ / 60.0 >=
         per_minute_;
}

AccessControl::AccessControl(AccessOptions options) : options_(std::move(options)) {
  if (options_.requests_per_minute < 0) throw Error("--req-limit must be >= 0 (0: no limit)");
  if (keys_required()) {
    keys_ = std::make_shared<const std::vector<ApiKey>>(read_api_keys(options_.key_file));
  }
}

Caller AccessControl::identify(const std::string& key, const std::string& client) const {
  if (!keys_required()) {
    return {"addr:" + client, client, options_.requests_per_minute, 0};
  }
  if (key.empty()) {
    throw RequestError(401,
                       "this server needs an API key: send it as 'Authorization: Bearer KEY' or "
                       "as the body's \"api_key\"");
  }
  std::shared_ptr<const std::vector<ApiKey>> keys;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    keys = keys_;
  }
  const auto presented = digest_of(key);
  const ApiKey* found = nullptr;
  for (const auto& candidate : *keys) {  // every key compared, whichever matches
    const bool same =
        CRYPTO_memcmp(candidate.digest.data(), presented.data(), presented.size()) == 0;
    if (same) found = &candidate;
  }
  if (found == nullptr) throw RequestError(401, "the API key is not one of this server's keys");
  return {"key:" + std::string(found->digest.begin(), found->digest.end()),
          "the key on line " + std::to_string(found->line) + " of " + options_.key_file,
          found->requests_per_minute, found->characters_per_minute};
}

void AccessControl::charge(const std::string& bucket, int64_t per_minute, double units,
                           const char* what, const std::string& name) {
  if (per_minute <= 0 || units <= 0) return;
  const auto now = TokenBucket::Clock::now();
  double wait = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (buckets_.size() >= kBucketsBeforePruning) {
      for (auto it = buckets_.begin(); it != buckets_.end();) {
        it = it->second.full(now) ? buckets_.erase(it) : std::next(it);
      }
    }
    auto it = buckets_.find(bucket);
    if (it == buckets_.end())
      it = buckets_.emplace(bucket, TokenBucket(double(per_minute), now)).first;
    wait = it->second.take(units, now);
  }
  if (wait > 0) {
    throw RequestError(429,
                       name + " has used its " + std::to_string(per_minute) + " " + what +
                           " per minute; retry in " + std::to_string(int(std::ceil(wait))) + " s",
                       int(std::ceil(wait)));
  }
}

void AccessControl::charge_request(const Caller& caller) {
  charge(caller.bucket + "#requests", caller.requests_per_minute, 1, "requests", caller.name);
}

void AccessControl::charge_characters(const Caller& caller, int64_t characters) {
  if (caller.characters_per_minute > 0 && characters > caller.characters_per_minute) {
    throw RequestError(413, "the request has " + std::to_string(characters) +
                                " characters, more than " + caller.name +
                                " may send in a minute (" +
                                std::to_string(caller.characters_per_minute) + ")");
  }
  charge(caller.bucket + "#characters", caller.characters_per_minute, double(characters),
         "characters", caller.name);
}

std::string AccessControl::reload() {
  if (!keys_required()) return "";
  try {
    auto keys = std::make_shared<const std::vector<ApiKey>>(read_api_keys(options_.key_file));
    std::lock_guard<std::mutex> lock(mutex_);
    keys_ = std::move(keys);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

size_t AccessControl::key_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return keys_ ? keys_->size() : 0;
}

std::string presented_key(const std::string& authorization, const std::string& body) {
  if (!authorization.empty()) {
    const std::string scheme = "bearer ";
    std::string start = authorization.substr(0, scheme.size());
    std::transform(start.begin(), start.end(), start.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    std::string key = start == scheme ? authorization.substr(scheme.size()) : "";
    key.erase(0, key.find_first_not_of(' '));
    if (key.empty()) throw RequestError(401, "the Authorization header must be 'Bearer KEY'");
    return key;
  }
  try {
    const auto root = parse_json_body(body, 8);
    if (root.is_object() && root.contains("api_key") && root["api_key"].is_string()) {
      return root["api_key"].get<std::string>();
    }
  } catch (const RequestError&) {
    // A body that is not JSON presents no key; the route says what is wrong with it after.
  }
  return "";
}

}  // namespace nmt

#endif  // NMT_HAVE_HTTP
