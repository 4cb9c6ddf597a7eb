// cli/cmd_bench.cpp: nmt bench matmul, decode and train end to end through the real binary,
// with tiny limits (they print numbers; nothing here checks a speed). `bench matmul` and
// `bench train` always measure the matmul ceilings at four sizes (minutes on a loaded 2-core
// machine): CmdBenchSlow, ctest label `slow`.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "core/config.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the shared test helpers

/// The sizes of `nmt bench matmul`'s table rows ("n fp32 bf16"), each checked to have two
/// positive rates.
std::vector<int> matmul_table_sizes(const std::string& out) {
  const std::regex row(R"(^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$)");
  std::vector<int> sizes;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    sizes.push_back(std::stoi(m[1]));
    EXPECT_GT(std::stod(m[2]), 0.0) << line;
    EXPECT_GT(std::stod(m[3]), 0.0) << line;
  }
  return sizes;
}

TEST(CmdBench, UnknownBenchmarkNamesTheAvailableOnes) {
  const auto dir = test::temp_dir("bench_cli");
  const auto run = run_nmt("bench fly", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(
      run.err,
      "error: nmt bench: unknown benchmark 'fly' (available: matmul, decode, linear, train)\n");
}

// One row per size (256 to 2048 on the CPU) with two positive rates, then the best of each.
TEST(CmdBenchSlow, MatmulPrintsAPositiveRatePerSizeAndPrecision) {
  const auto dir = test::temp_dir("bench_matmul");
  const auto run = run_nmt("bench matmul --device cpu --threads 1", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto sizes = matmul_table_sizes(run.out);
  EXPECT_EQ(sizes, (std::vector<int>{256, 512, 1024, 2048})) << run.out;
  const auto bad = run_nmt("bench matmul --device tpu", "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: device 'tpu' is not valid: use auto, cpu, cuda or cuda:N\n");
}

// The same table at two small sizes given with --sizes (fast enough for the default suite), and
// its errors: a size out of range, a device that does not exist.
TEST(CmdBench, MatmulTimesTheGivenSizes) {
  const auto dir = test::temp_dir("bench_matmul_sizes");
  const auto run = run_nmt("bench matmul --device cpu --threads 1 --sizes 32,64", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto sizes = matmul_table_sizes(run.out);
  EXPECT_EQ(sizes, (std::vector<int>{32, 64})) << run.out;
  EXPECT_NE(run.out.find("ceiling"), std::string::npos) << run.out;
  const auto bad = run_nmt("bench matmul --device cpu --sizes 0", "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: bench matmul: --sizes 0 is not valid: use 1..16384\n");
  const auto tpu = run_nmt("bench matmul --device tpu --sizes 32", "", dir);
  EXPECT_EQ(tpu.code, 2);
  EXPECT_EQ(tpu.err, "error: device 'tpu' is not valid: use auto, cpu, cuda or cuda:N\n");
}

// One row per rows × shape with two positive rates, and the packed kernel's output within float
// rounding of LibTorch's (the kernel's own tests: test_packed_linear.cpp); its errors.
TEST(CmdBench, LinearTimesBothWaysForEachShape) {
  const auto dir = test::temp_dir("bench_linear");
  const auto run = run_nmt("bench linear --rows 2,13 --shapes 16x40,33x7", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const std::regex row(
      R"(^\s*(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)x\s+(\S+)\s*$)");
  std::vector<std::string> shapes;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    shapes.push_back(m[1].str() + ":" + m[2].str() + "x" + m[3].str());
    EXPECT_GT(std::stod(m[4]), 0.0) << line;
    if (run.out.find("packed kernel: none") == std::string::npos) {
      EXPECT_GT(std::stod(m[5]), 0.0) << line;
      EXPECT_LT(std::stod(m[7]), 1e-4) << line;
    }
  }
  EXPECT_EQ(shapes, (std::vector<std::string>{"2:16x40", "2:33x7", "13:16x40", "13:33x7"}))
      << run.out;
  const auto bad = run_nmt("bench linear --shapes 256", "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: bench linear: --shapes '256' is not valid: use INxOUT, each 1..65536, e.g. "
            "256x1024\n");
  const auto rows = run_nmt("bench linear --rows 0", "", dir);
  EXPECT_EQ(rows.code, 2);
  EXPECT_EQ(rows.err, "error: bench linear: --rows 0 is not valid: use 1..65536\n");
}

// Three sentences: the naive loop, cached greedy and beam 2 each decode them, and the naive and
// cached greedy outputs agree.
TEST(CmdBench, DecodeTimesEachMethodOnAFewSentences) {
  const auto dir = test::temp_dir("bench_decode");
  auto model = fixture_model(6);
  save_checkpoint(dir / "m.pt", fixture_config(), model, fixture_tokenizer(), {});
  const std::string common = "bench decode --device cpu --checkpoint " + (dir / "m.pt").string() +
                             " --src " + std::string(NMT_FIXTURES_DIR) + "/tiny_val.en";
  const auto run = run_nmt(common + " --limit 3 --bench-beam 2", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find(": 3 sentences from "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("naive and cached greedy outputs differ on 0 of 3 sentences"),
            std::string::npos)
      << run.out;
  const auto mbr = run_nmt(common + " --limit 3 --mbr 2", "", dir);
  EXPECT_EQ(mbr.code, 2);
  EXPECT_NE(mbr.err.find("--mbr is not one of them"), std::string::npos) << mbr.err;
}

// Two timed steps of the tiny config on the fixture corpus.
TEST(CmdBenchSlow, TrainReportsThroughputOfAFewSteps) {
  const auto dir = test::temp_dir("bench_train");
  Config config = tiny_config(dir / "run");
  save_config(config, dir / "config.json");
  const std::string common = "bench train --config " + (dir / "config.json").string();
  const auto run = run_nmt(common + " --steps 2 --warmup 1", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("tokens/s"), std::string::npos) << run.out;
  const auto bad = run_nmt(common + " --steps 0", "", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: bench train: --steps must be >= 1 and --warmup >= 0\n");
}

}  // namespace
}  // namespace nmt
