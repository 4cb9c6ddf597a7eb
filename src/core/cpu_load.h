#pragma once

#include <string>
#include <vector>

namespace nmt {

/// What the processors this process may run on had done by one moment: the busy time of those
/// cores in /proc/stat (user, nice, system, irq, softirq and steal, the hypervisor's time for
/// other guests), this process's own processor time (all its threads) and the wall clock. A
/// CPU quota (cgroup cpu.max) slows a process without another one's time: it is not seen here.
struct CpuReading {
  double busy_seconds = -1.0;  ///< summed over the cores; negative when /proc/stat is unreadable
  double own_seconds = 0.0;
  double wall_seconds = 0.0;
  int cores = 0;  ///< the cores counted: the process's affinity mask, or every "cpuN" line
};

/// The reading now, of the cores in this process's affinity mask (sched_getaffinity).
CpuReading read_cpu();

/// A reading from the text of /proc/stat (busy time and cores only), for read_cpu and tests:
/// the "cpuN" lines of the cores in `cores` (all of them when empty); `ticks_per_second` is the
/// kernel's USER_HZ.
CpuReading parse_proc_stat(const std::string& text, double ticks_per_second,
                           const std::vector<int>& cores = {});

/// How much of the processor time `threads` of this process could have had between two readings
/// other processes took: their busy time (the cores' busy time less this process's own) beyond
/// what the cores the threads leave free hold, over the threads' wall time (at most one core
/// each), within [0, 1]. On 2 cores and 2 threads, all of the others' time; on 16 cores and 4
/// threads, only what exceeds 12 cores. Negative when either reading has no busy time.
double others_cpu_share(const CpuReading& before, const CpuReading& after, int threads);

}  // namespace nmt
