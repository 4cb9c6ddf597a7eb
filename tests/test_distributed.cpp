// Multi-process training (train/distributed.h): the environment's parsing, and real nmt ranks
// over 127.0.0.1 — equal to one process, resumable, and ending in bounded time when one fails.
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <map>

#include <gtest/gtest.h>

#include "core/config.h"
#include "core/error.h"
#include "spawn_util.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/distributed.h"

extern char** environ;

namespace nmt::test {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

DistEnv parse(const Env& env) {
  return parse_dist_env([&](const char* name) -> const char* {
    const auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  });
}

TEST(DistEnv, UnsetOrOneProcessIsNotDistributed) {
  EXPECT_FALSE(parse({}).distributed());
  EXPECT_FALSE(parse({{"WORLD_SIZE", "1"}, {"RANK", "0"}, {"MASTER_PORT", "x"}}).distributed());
}

TEST(DistEnv, ReadsWhatTorchrunSets) {
  const DistEnv env = parse({{"WORLD_SIZE", "4"},
                             {"RANK", "3"},
                             {"LOCAL_RANK", "1"},
                             {"LOCAL_WORLD_SIZE", "2"},
                             {"MASTER_ADDR", "node1"},
                             {"MASTER_PORT", "29400"},
                             {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                             {"TORCHELASTIC_RESTART_COUNT", "2"},
                             {"OMP_NUM_THREADS", "3"}});
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.address(), "node1:29400");
  EXPECT_TRUE(env.agent_store);
  EXPECT_EQ(env.restart_count, 2);
  EXPECT_EQ(rank_threads(env, 0, 16), 3);  // OMP_NUM_THREADS wins over the share of cores
  EXPECT_EQ(rank_threads(env, 5, 16), 5);  // train.threads wins over both
  EXPECT_EQ(rank_threads(parse({{"WORLD_SIZE", "2"},
                                {"RANK", "0"},
                                {"MASTER_PORT", "1"},
                                {"LOCAL_WORLD_SIZE", "2"}}),
                         0, 16),
            8);
}

TEST(DistEnv, BadValuesNameTheVariable) {
  expect_error(
      [] {
        parse({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_PORT", "1"}});
      },
      "RANK = '2' is not valid: use an integer in [0, 1]");
  expect_error([] { parse({{"WORLD_SIZE", "2"}, {"RANK", "0"}}); }, "MASTER_PORT is not set");
  expect_error([] { parse({{"WORLD_SIZE", "two"}}); }, "WORLD_SIZE = 'two'");
}

TEST(DistEnv, FingerprintIsStable) {
  EXPECT_EQ(fingerprint(""), int64_t(14695981039346656037ull >> 1));
  EXPECT_NE(fingerprint("a"), fingerprint("b"));
}

/// A TCP port nobody listens on now (bound once to port 0, then released).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// Starts `nmt args` as rank `rank` of `world` at 127.0.0.1:`port`, output to `log`.
pid_t start_rank(int rank, int world, int port, const std::vector<std::string>& args,
                 const fs::path& log) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("RANK=", 0) != 0 && entry.rfind("WORLD_SIZE=", 0) != 0) env.push_back(entry);
  }
  for (const auto& [key, value] : Env{{"RANK", std::to_string(rank)},
                                      {"LOCAL_RANK", std::to_string(rank)},
                                      {"WORLD_SIZE", std::to_string(world)},
                                      {"LOCAL_WORLD_SIZE", std::to_string(world)},
                                      {"MASTER_ADDR", "127.0.0.1"},
                                      {"MASTER_PORT", std::to_string(port)}}) {
    env.push_back(key + "=" + value);
  }
  std::vector<std::string> all = {NMT_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& a : all) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) ::_exit(126);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

/// A config file for tiny runs (dropout on, one thread, no data-parallel workers) in `dir`.
fs::path write_config(const fs::path& dir, int64_t max_steps) {
  Config config = tiny_config(dir / "unused");
  config.train.max_epochs = 0;
  config.train.max_steps = max_steps;
  config.train.validate_every = 8;
  config.train.cpu_workers = 1;
  config.train.dist_timeout = 20;
  save_config(config, dir / "config.json");
  return dir / "config.json";
}

struct RankRun {
  std::vector<int> codes;
  std::vector<std::string> outputs;
};

/// Runs `world` ranks of `nmt args` to the end (at most `timeout_s`).
RankRun run_ranks(int world, const std::vector<std::string>& args, const fs::path& dir,
                  const std::string& name, double timeout_s = 120) {
  const int port = free_port();
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pids.push_back(start_rank(r, world, port, args, dir / (name + std::to_string(r) + ".log")));
  }
  RankRun run;
  for (int r = 0; r < world; ++r) {
    run.codes.push_back(wait_nmt(pids[size_t(r)], timeout_s));
    run.outputs.push_back(slurp(dir / (name + std::to_string(r) + ".log")));
  }
  return run;
}

std::vector<std::string> train_args(const fs::path& config, const fs::path& run_dir,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"train", "--config", config.string(), "--set",
                                   "train.run_dir=" + run_dir.string()};
  for (auto& e : extra) args.insert(args.end(), {"--set", e});
  return args;
}

/// The largest relative difference between two runs' last.pt parameters.
double parameter_difference(const fs::path& a, const fs::path& b) {
  auto left = load_checkpoint(a / "last.pt", at::kCPU).model->named_parameters();
  auto right = load_checkpoint(b / "last.pt", at::kCPU).model->named_parameters();
  double worst = 0.0;
  for (const auto& item : left) {
    const auto& other = right[item.key()];
    const double scale = std::max(item.value().abs().max().item<double>(), 1e-12);
    worst = std::max(worst, (item.value() - other).abs().max().item<double>() / scale);
  }
  return worst;
}

TEST(Distributed, TwoRanksEqualOneProcessAccumulatingTwoBatches) {
  TempDir dir("dist_equal");
  const auto config = write_config(dir, 24);
  const RankRun two = run_ranks(2, train_args(config, dir / "two"), dir, "two");
  ASSERT_EQ(two.codes, (std::vector<int>{0, 0})) << two.outputs[0] << two.outputs[1];
  const NmtRun one = run_nmt(train_args(config, dir / "one", {"train.accum_steps=2"}), dir, "one");
  ASSERT_EQ(one.code, 0) << one.output;
  EXPECT_LT(parameter_difference(dir / "one", dir / "two"), 1e-6);
  EXPECT_EQ(read_checkpoint_state(dir / "two" / "last.pt").world_size, 2);
  EXPECT_FALSE(fs::exists(dir / "two" / "rank1"));  // rank 1 writes nothing
}

TEST(Distributed, TwoRanksStoppedAndResumedEqualTheUninterruptedRun) {
  TempDir dir("dist_resume");
  const auto config = write_config(dir, 24);
  const RankRun whole = run_ranks(2, train_args(config, dir / "whole"), dir, "whole");
  ASSERT_EQ(whole.codes, (std::vector<int>{0, 0})) << whole.outputs[0];
  const auto halves = train_args(config, dir / "halves", {"train.max_steps=12"});
  const RankRun first = run_ranks(2, halves, dir, "first");
  ASSERT_EQ(first.codes, (std::vector<int>{0, 0})) << first.outputs[0];
  const std::vector<std::string> resume = {"train", "--resume", (dir / "halves").string(), "--set",
                                           "train.max_steps=24"};
  const RankRun second = run_ranks(2, resume, dir, "second");
  ASSERT_EQ(second.codes, (std::vector<int>{0, 0})) << second.outputs[0] << second.outputs[1];
  EXPECT_EQ(parameter_difference(dir / "whole", dir / "halves"), 0.0);
}

/// Waits until `path` exists (at most `timeout_s`).
bool wait_for_file(const fs::path& path, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(Distributed, AKilledRankEndsTheOtherWithAnErrorAndLeavesLastPtResumable) {
  TempDir dir("dist_kill");
  const auto args = train_args(write_config(dir, 100000), dir / "run");
  const int port = free_port();
  const pid_t rank0 = start_rank(0, 2, port, args, dir / "rank0.log");
  const pid_t rank1 = start_rank(1, 2, port, args, dir / "rank1.log");
  ASSERT_TRUE(wait_for_file(dir / "run" / "last.pt", 60)) << slurp(dir / "rank0.log");
  ::kill(rank1, SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(wait_nmt(rank0, 20), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20);
  wait_nmt(rank1, 5);
  const std::string output = slurp(dir / "rank0.log");
  EXPECT_NE(output.find("rank 0 of 2: step "), std::string::npos) << output;
  EXPECT_NE(output.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << output;
  EXPECT_GT(read_checkpoint_state(dir / "run" / "last.pt").step, 0);
}

TEST(Distributed, AMissingRankEndsTheRendezvousInTime) {
  TempDir dir("dist_missing");
  const auto args = train_args(write_config(dir, 10), dir / "run", {"train.dist_timeout=3"});
  const auto start = std::chrono::steady_clock::now();
  const pid_t rank0 = start_rank(0, 3, free_port(), args, dir / "rank0.log");
  EXPECT_NE(wait_nmt(rank0, 30), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 15);
  const std::string output = slurp(dir / "rank0.log");
  EXPECT_NE(output.find("only 1 of 3 ranks joined"), std::string::npos) << output;
  EXPECT_NE(output.find("missing: rank 1, 2"), std::string::npos) << output;
}

TEST(Distributed, RanksWithDifferentConfigsStopAtStartUp) {
  TempDir dir("dist_configs");
  const auto config = write_config(dir, 10);
  const int port = free_port();
  const pid_t rank0 = start_rank(0, 2, port, train_args(config, dir / "run"), dir / "r0.log");
  const pid_t rank1 =
      start_rank(1, 2, port, train_args(config, dir / "run", {"train.lr=0.1"}), dir / "r1.log");
  EXPECT_NE(wait_nmt(rank0, 60), 0);
  EXPECT_NE(wait_nmt(rank1, 60), 0);
  EXPECT_NE(slurp(dir / "r0.log").find("rank 1's config fingerprint"), std::string::npos)
      << slurp(dir / "r0.log");
  EXPECT_FALSE(fs::exists(dir / "run" / "last.pt"));
}

TEST(Distributed, APortInUseIsNamed) {
  TempDir dir("dist_port");
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::listen(fd, 1);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  const int port = ntohs(address.sin_port);
  const auto args = train_args(write_config(dir, 10), dir / "run", {"train.dist_timeout=3"});
  const pid_t rank0 = start_rank(0, 2, port, args, dir / "rank0.log");
  EXPECT_NE(wait_nmt(rank0, 30), 0);
  ::close(fd);
  const std::string output = slurp(dir / "rank0.log");
  EXPECT_NE(output.find("cannot host the rendezvous store at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace nmt::test
