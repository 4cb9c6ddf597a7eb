#pragma once

// Fixtures for the `nmt serve` tests: a tiny checkpoint saved once per process, a served model
// loaded from it, small HTTP helpers over httplib::Client, raw sockets for clients that
// misbehave, and `nmt serve` as a child process.

#include <httplib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

/// A TCP connection to 127.0.0.1:`port`: its descriptor, or -1.
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    return fd;
  }
  if (fd >= 0) ::close(fd);
  return -1;
}

/// Whether the server has closed `fd` (reads what it sent first, up to `wait`), appending what
/// it sent to `received` when given.
inline bool closed_by_server(int fd, std::chrono::milliseconds wait,
                             std::string* received = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  char buffer[4096];
  do {
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, 10) > 0) {
      const auto got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) return true;
      if (received != nullptr) received->append(buffer, size_t(got));
    }
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

/// Connects to the server and sends `partial`, then one byte of `trickle` every `every` (cycling
/// through it) until the server closes the connection or `limit` passes; the time it took.
inline std::chrono::steady_clock::duration time_until_dropped(
    int port, const std::string& partial, std::chrono::steady_clock::duration limit,
    const std::string& trickle = "",
    std::chrono::milliseconds every = std::chrono::milliseconds(100)) {
  const int fd = connect_loopback(port);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), ssize_t(partial.size()));
  const auto start = std::chrono::steady_clock::now();
  for (size_t sent = 0; std::chrono::steady_clock::now() - start < limit; ++sent) {
    if (closed_by_server(fd, every)) break;
    if (!trickle.empty() && ::send(fd, &trickle[sent % trickle.size()], 1, MSG_NOSIGNAL) != 1) {
      break;
    }
  }
  ::close(fd);
  return std::chrono::steady_clock::now() - start;
}

/// `nmt serve ARGS` as a child process: its pid, its stdout (a pipe) and its stderr (a file).
struct ServeProcess {
  pid_t pid = -1;
  int out = -1;
};

inline ServeProcess spawn_serve(const std::vector<std::string>& args,
                                const std::filesystem::path& err_file) {
  std::vector<std::string> all = {NMT_BINARY, "serve"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

/// The first line the child prints, waiting up to 60 s.
inline std::string first_line(int fd) {
  std::string line;
  char c = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, 100) <= 0) continue;
    if (::read(fd, &c, 1) != 1 || c == '\n') break;
    line += c;
  }
  return line;
}

/// The port in `nmt serve`'s first line ("... on http://127.0.0.1:PORT ..."), or 0.
inline int port_in(const std::string& line) {
  const auto at = line.find("127.0.0.1:");
  return at == std::string::npos ? 0 : std::stoi(line.substr(at + 10));
}

/// Waits up to 20 s for the child to exit (then kills it: a test fails, but leaves no process
/// behind); its wait status.
inline int wait_for_exit(pid_t pid) {
  int status = 0;
  if (!wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; })) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  return status;
}

/// Waits for a spawned server to exit, closes its stdout, expects exit status 0 and returns its
/// stderr (shown with the status when it did not exit 0).
inline std::string expect_clean_exit(const ServeProcess& child,
                                     const std::filesystem::path& err_file) {
  const int status = wait_for_exit(child.pid);
  ::close(child.out);
  const std::string err = read_text(err_file);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << err;
  return err;
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
