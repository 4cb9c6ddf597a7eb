// core/cpu_load.h: the processor time other processes take, read from /proc/stat and this
// process's own usage, the reading "auto" warns from when its speed probe met a busy host.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/cpu_load.h"
#include "cpu_load_test_util.h"

namespace nmt {
namespace {

TEST(CpuLoad, ProcStatGivesTheBusyTimeOfTheCoresAndTheirCount) {
  // user nice system idle iowait irq softirq steal guest guest_nice: idle and iowait are not
  // busy, steal (the hypervisor's time for other guests) is, guest is inside user already.
  const std::string stat =
      "cpu  100 5 50 1000 20 3 2 10 7 0\n"
      "cpu0 60 5 20 500 10 3 1 5 7 0\n"
      "cpu1 40 0 30 500 10 0 1 5 0 0\n"
      "intr 12345 0 0\n"
      "ctxt 999\n";
  const CpuReading all = parse_proc_stat(stat, 100.0);
  EXPECT_EQ(all.cores, 2);
  EXPECT_DOUBLE_EQ(all.busy_seconds, 1.70);  // 94 + 76 ticks
  // Only the cores a process may run on (its affinity mask): cpu1.
  const CpuReading mine = parse_proc_stat(stat, 100.0, {1});
  EXPECT_EQ(mine.cores, 1);
  EXPECT_DOUBLE_EQ(mine.busy_seconds, 0.76);
  EXPECT_LT(parse_proc_stat(stat, 100.0, {7}).busy_seconds, 0.0);
  // A kernel's older four fields still read; no "cpuN" line is no reading.
  EXPECT_DOUBLE_EQ(parse_proc_stat("cpu  10 0 10 80\ncpu0 10 0 10 80\n", 100.0).busy_seconds, 0.2);
  EXPECT_LT(parse_proc_stat("cpu  10 0 10 80\nintr 1\n", 100.0).busy_seconds, 0.0);
  EXPECT_LT(parse_proc_stat("", 100.0).busy_seconds, 0.0);
}

TEST(CpuLoad, OthersShareIsWhatTheyTookFromTheThreads) {
  const CpuReading before{10.0, 1.0, 100.0, 2};
  // A second on 2 cores: 2 s busy, 1.5 of them this process's: the others took 0.5 of the 2
  // threads' 2 s.
  EXPECT_DOUBLE_EQ(others_cpu_share(before, {12.0, 2.5, 101.0, 2}, 2), 0.25);
  // With one thread on 2 cores, the others' half second fits on the free core.
  EXPECT_DOUBLE_EQ(others_cpu_share(before, {12.0, 2.5, 101.0, 2}, 1), 0.0);
  // 16 cores, 4 threads: only what exceeds the 12 free cores counts (13 s of others: 1 of 4).
  const CpuReading wide{10.0, 1.0, 100.0, 16};
  EXPECT_DOUBLE_EQ(others_cpu_share(wide, {27.0, 5.0, 101.0, 16}, 4), 0.25);
  EXPECT_DOUBLE_EQ(others_cpu_share(wide, {25.0, 5.0, 101.0, 16}, 4), 0.0);
  // Within [0, 1]; unknown without /proc/stat or time between the readings.
  EXPECT_DOUBLE_EQ(others_cpu_share(before, {20.0, 1.0, 101.0, 2}, 2), 1.0);
  EXPECT_LT(others_cpu_share({-1.0, 0.0, 100.0, 0}, {12.0, 2.5, 101.0, 2}, 2), 0.0);
  EXPECT_LT(others_cpu_share(before, before, 2), 0.0);
}

TEST(CpuLoad, ChildrenSpinningAreOthersAndOwnWorkCountsAsOwn) {
  const CpuReading start = read_cpu();
  if (start.busy_seconds < 0.0) GTEST_SKIP() << "no /proc/stat here";
  ASSERT_GT(start.cores, 0);
  // A child spinning one core for a second, while this process sleeps: at least a core's share
  // of all of them (more when other tests run beside this one).
  test::Spinners spinner(1, 1.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  spinner.wait();
  const CpuReading end = read_cpu();
  EXPECT_GE(others_cpu_share(start, end, start.cores), 0.5 / start.cores);
  // This process's own spinning counts as its own: 0.3 s of it come within a deadline however
  // busy the host is (the wall time they take depends on the tests beside this one).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  CpuReading now = end;
  volatile double sink = 0.0;
  while (now.own_seconds - end.own_seconds < 0.3 && std::chrono::steady_clock::now() < deadline) {
    for (int k = 0; k < 100000; ++k) sink = sink + k;
    now = read_cpu();
  }
  EXPECT_GE(now.own_seconds - end.own_seconds, 0.3);
  EXPECT_GT(now.wall_seconds, end.wall_seconds);
}

}  // namespace
}  // namespace nmt
