// Ctrl-C / SIGTERM during `nmt translate --input` and `nmt evaluate` of a large file: the
// process stops within a batch, keeps the lines translated so far and exits 130.
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "decode_test_util.h"
#include "spawn_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A random model that never ends a sentence early (slow to decode: every line runs to the
/// length limit), and `lines` fixture sentence pairs.
void write_slow_model_and_data(const fs::path& dir, size_t lines) {
  Config config = test::fixture_config();
  config.decode.max_len_offset = 50;
  Seq2Seq model = test::fixture_model(7, /*eos_bias=*/-100.0);
  save_checkpoint(dir / "model.pt", config, model, test::fixture_tokenizer(), {});
  const auto text =
      read_parallel(fs::path(NMT_FIXTURES_DIR) / "tiny.en", fs::path(NMT_FIXTURES_DIR) / "tiny.de");
  std::ofstream src(dir / "big.en"), ref(dir / "big.de");
  for (size_t i = 0; i < lines; ++i) {
    src << text.src[i % text.size()] << "\n";
    ref << text.tgt[i % text.size()] << "\n";
  }
}

size_t count_lines(const fs::path& path) {
  const std::string text = test::slurp(path);
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

/// Sends `signal_number` once `ready` holds (or after 60 s), then returns the seconds from the
/// signal to the exit and the exit code.
std::pair<double, int> interrupt_when(pid_t pid, int signal_number,
                                      const std::function<bool()>& ready) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!ready() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto sent = Clock::now();
  ::kill(pid, signal_number);
  const int code = test::wait_nmt(pid, 30);
  return {std::chrono::duration<double>(Clock::now() - sent).count(), code};
}

TEST(InterruptDecoding, SigtermDuringTranslateInputWritesTheLinesDoneAndExits130) {
  const auto dir = test::temp_dir("interrupt_translate");
  const size_t total = 20000;
  write_slow_model_and_data(dir, total);
  const fs::path out = dir / "out.de";
  const pid_t pid =
      test::start_nmt({"translate", "--checkpoint", (dir / "model.pt").string(), "--input",
                       (dir / "big.en").string(), "--output", out.string()},
                      dir / "log");
  // Once the first chunk is out, the process is deep in decoding.
  const auto [seconds, code] =
      interrupt_when(pid, SIGTERM, [&] { return fs::exists(out) && fs::file_size(out) > 0; });
  const std::string log = test::slurp(dir / "log");
  std::printf("translate stopped %.3f s after SIGTERM\n", seconds);
  EXPECT_EQ(code, 130) << log;
  // Within a batch (about half a second here, printed above); the bound only tells "stopped"
  // from "decoded on" (the whole file takes minutes) on a loaded or sanitized build.
  EXPECT_LT(seconds, 10.0);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(log, match, std::regex("the first ([0-9]+) line\\(s\\)"))) << log;
  const size_t written = std::stoul(match[1]);
  EXPECT_GT(written, 0u);
  EXPECT_LT(written, total);
  EXPECT_EQ(count_lines(out), written);
}

TEST(InterruptDecoding, SigintDuringEvaluateKeepsTheHypothesesDoneAndExits130) {
  const auto dir = test::temp_dir("interrupt_evaluate");
  const size_t total = 20000;
  write_slow_model_and_data(dir, total);
  const fs::path hyp = dir / "hyp.de";
  const pid_t pid = test::start_nmt(
      {"evaluate", "--checkpoint", (dir / "model.pt").string(), "--src", (dir / "big.en").string(),
       "--ref", (dir / "big.de").string(), "--output", hyp.string()},
      dir / "log");
  const auto started = Clock::now();
  const auto [seconds, code] = interrupt_when(pid, SIGINT, [&] {
    return test::slurp(dir / "log").find("sentences") != std::string::npos &&
           Clock::now() - started > std::chrono::seconds(2);
  });
  const std::string log = test::slurp(dir / "log");
  std::printf("evaluate stopped %.3f s after SIGINT\n", seconds);
  EXPECT_EQ(code, 130) << log;
  EXPECT_LT(seconds, 10.0);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(log, match, std::regex("the first ([0-9]+) of 20000 hypotheses")))
      << log;
  EXPECT_EQ(count_lines(hyp), std::stoul(match[1]));
  EXPECT_EQ(log.find("BLEU"), std::string::npos) << "an interrupted evaluation prints no scores";
}

}  // namespace
}  // namespace nmt
