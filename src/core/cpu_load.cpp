#include "core/cpu_load.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

namespace nmt {

CpuReading parse_proc_stat(const std::string& text, double ticks_per_second,
                           const std::vector<int>& cores) {
  CpuReading reading;
  double busy = 0.0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // "cpuN user nice system idle iowait irq softirq steal guest guest_nice": one core ("cpu "
    // sums them all). Guest time is counted in user time already.
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int core = -1;
    double value[8] = {};
    int fields_read = 0;
    if (!(fields >> core)) continue;
    if (!cores.empty() && std::find(cores.begin(), cores.end(), core) == cores.end()) continue;
    while (fields_read < 8 && fields >> value[fields_read]) ++fields_read;
    if (fields_read < 4) return {};
    busy += value[0] + value[1] + value[2] + value[5] + value[6] + value[7];
    ++reading.cores;
  }
  if (reading.cores > 0) reading.busy_seconds = busy / ticks_per_second;
  return reading;
}

CpuReading read_cpu() {
  std::vector<int> cores;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    for (int core = 0; core < CPU_SETSIZE; ++core) {
      if (CPU_ISSET(core, &mask)) cores.push_back(core);
    }
  }
  std::ifstream file("/proc/stat");
  std::stringstream text;
  text << file.rdbuf();
  const long ticks = sysconf(_SC_CLK_TCK);
  CpuReading reading = parse_proc_stat(text.str(), ticks > 0 ? double(ticks) : 100.0, cores);
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    const auto seconds = [](const timeval& t) { return double(t.tv_sec) + t.tv_usec / 1e6; };
    reading.own_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  reading.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return reading;
}

double others_cpu_share(const CpuReading& before, const CpuReading& after, int threads) {
  if (before.busy_seconds < 0.0 || after.busy_seconds < 0.0 || after.cores <= 0) return -1.0;
  const double wall = after.wall_seconds - before.wall_seconds;
  const int used = std::clamp(threads, 1, after.cores);
  if (wall <= 0.0) return -1.0;
  const double others =
      (after.busy_seconds - before.busy_seconds) - (after.own_seconds - before.own_seconds);
  const double taken = others - double(after.cores - used) * wall;
  return std::clamp(taken / (double(used) * wall), 0.0, 1.0);
}

}  // namespace nmt
