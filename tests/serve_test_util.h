#pragma once

// Fixtures for the `nmt serve` tests: a tiny checkpoint saved once per process, a served model
// loaded from it, and small HTTP helpers over httplib::Client.

#include <httplib.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode_test_util.h"
#include "serve/server.h"
#include "train/checkpoint.h"

namespace nmt::test {

/// A checkpoint of a random fixture model (short outputs: decode.max_len_offset 5), saved once
/// into a temp dir that is removed when the test binary exits.
inline const std::filesystem::path& serve_checkpoint() {
  static const TempDir dir("serve_checkpoint");
  static const std::filesystem::path file = [] {
    auto model = fixture_model(11);
    save_checkpoint(dir / "m.pt", fixture_config(), model, fixture_tokenizer(), {});
    return dir / "m.pt";
  }();
  return file;
}

/// The checkpoint as `nmt serve` loads it (CPU).
inline ServedModel served_model() {
  auto loaded = load_checkpoint(serve_checkpoint(), at::kCPU);
  ServedModel served{loaded.model,
                     loaded.tokenizer,
                     loaded.config,
                     at::kCPU,
                     serve_checkpoint().string(),
                     loaded.config.data.tgt_lang};
  return served;
}

/// A started server over the test checkpoint on an ephemeral loopback port; stopped when it
/// goes out of scope.
struct RunningServer {
  explicit RunningServer(ServeOptions options = {}) : server(served_model(), with_port(options)) {
    port = server.start();
  }
  static ServeOptions with_port(ServeOptions options) {
    options.port = 0;
    return options;
  }
  TranslationServer server;
  int port = 0;
};

/// Sentences of the fixture's kind (some longer, some short, one blank).
inline std::vector<std::string> serve_sentences() {
  return {"a dog runs .",
          "a man is carrying a red bike .",
          "two children play in the green water near a car .",
          "",
          "a woman .",
          "three people are sitting on a bench in the park .",
          "a cat sleeps .",
          "the man in the blue shirt is cleaning a car ."};
}

/// Polls `ready` every 2 ms for up to 20 s; false if it never became true.
inline bool wait_until(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

/// POST /translate with `body`; the client waits up to 30 s.
inline httplib::Result post_translate(int port, const std::string& body) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  return client.Post("/translate", body, "application/json");
}

/// What the browser test (tests/browser/page_test.py) lacks here: "/usr/bin/chromium",
/// "/usr/bin/chromedriver" or "python3-selenium"; empty when it can run.
inline std::string missing_browser() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromedriver"}) {
    if (!std::filesystem::exists(path)) return path;
  }
  if (std::system("/usr/bin/python3 -c 'import selenium' 2>/dev/null") != 0) {
    return "python3-selenium";
  }
  return "";
}

/// Runs tests/browser/page_test.py against the server on `port` with `flags`, screenshots into
/// <cwd>/artifacts/<name>/; returns "" when every check passed, else its output.
inline std::string run_page_test(int port, const std::string& name, const std::string& flags = "") {
  const std::filesystem::path artifacts = std::filesystem::current_path() / "artifacts" / name;
  std::filesystem::remove_all(artifacts);
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / ("nmt_page_test_" + name + ".log");
  const std::string command =
      "/usr/bin/python3 " + std::string(NMT_SOURCE_DIR) +
      "/tests/browser/page_test.py --url http://127.0.0.1:" + std::to_string(port) + " --out " +
      artifacts.string() + " " + flags + " > " + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const std::string output = read_text(log);
  return output.empty() ? "page_test.py failed with no output" : output;
}

}  // namespace nmt::test
