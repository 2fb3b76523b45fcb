// The process tree of a job, from /proc: which processes descend from a
// PID, and the CPU time each has used. Parsing is in proc_parse.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sense/host/proc_parse.h"

namespace gpuenv {

/// Every live process below `root` (not root itself), parents before their
/// children. Reads <proc>/PID/task/*/children; where the kernel lacks that
/// file (CONFIG_PROC_CHILDREN off) it scans every <proc>/PID/stat instead.
std::vector<ProcStat> process_tree(int root, const std::string& proc = "/proc");

/// CPU use of a tree between two readings.
struct TreeCpu {
  double cores = 0;      // all its processes, in cores (1.0: one CPU all the time)
  double top_cores = 0;  // its busiest process
  int processes = 0;
};

/// Remembers each PID's CPU ticks so that each reading gives the use since
/// the one before (a new PID counts from 0: it started in between).
class CpuMeter {
 public:
  TreeCpu read(const std::vector<ProcStat>& tree, double seconds_since_last);

 private:
  std::map<int, std::uint64_t> ticks_;
  long hz_ = 0;
};

}  // namespace gpuenv
