// What the host's /proc and cgroup tree say of the processes NVML lists on
// the GPUs, for `gpuenv export`'s jobs (issue 38, docs/metrics.md "Jobs").
// NVML names host PIDs: in a container the exporter reads the host's /proc
// mounted read-only (--proc-root) or shares the host's PID namespace.
// Every read is bounded: files are read up to a cap, ancestor walks stop
// after kMaxAncestors or at a loop, a job's process list at
// kMaxJobProcesses. A process that is gone is found=false, never an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/gpu_jobs.h"

namespace gpuenv {

struct ProcessReadOptions {
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

/// The most ancestors a tree walk follows.
inline constexpr int kMaxAncestors = 64;

/// The facts of each of `pids`, in order.
std::vector<ProcessFacts> read_process_facts(const std::vector<std::uint32_t>& pids, const ProcessReadOptions& options);

/// The CPU `owner`'s job used: its cgroup's when owner.cgroup is set (v2:
/// cpu.stat usage_usec, cpu.max, cpuset.cpus.effective, cgroup.procs of it
/// and every cgroup under it; v1: cpuacct.usage, cpu.cfs_quota_us and
/// cpu.cfs_period_us, cpuset.cpus, cgroup.procs, under the cpuacct, cpu and
/// cpuset controllers' trees), else the process tree under owner.root_pid
/// (/proc/PID/task/*/children; usage_s the tree's utime+stime, cores_allowed
/// the root's Cpus_allowed_list). cores_allowed is the tightest of the
/// quotas of the cgroup and those above it and the CPU count of its (or the
/// nearest above it) cpuset. A cgroup with ".." in its path reads nothing;
/// cgroup v2 is told by <cgroup_root>/cgroup.controllers, and v1's
/// controllers are looked for as cpuacct/, cpu,cpuacct/, cpuacct,cpu/, cpu/
/// and cpuset/ under cgroup_root. Unknown stays nullopt.
JobCpuReading read_job_cpu(const JobOwner& owner, const ProcessReadOptions& options);

/// read_process_facts and read_job_cpu round after round, remembering what
/// does not change while a process lives (docs/performance.md: a round of 8
/// GPUs x 64 processes): a PID's facts while its start time (stat's
/// starttime) stays the same, user names, and a job cgroup's cores allowed
/// and the cgroups under it (a step started since counts from the next
/// refresh); each is read afresh every kRefreshRounds rounds. Only
/// /proc/PID/stat and the job cgroups' cpu.stat and cgroup.procs are read
/// every round.
class ProcessReader {
 public:
  static constexpr int kRefreshRounds = 12;
  explicit ProcessReader(ProcessReadOptions options);
  ~ProcessReader();
  /// The facts of each of `pids`, in order; PIDs not asked are forgotten.
  std::vector<ProcessFacts> facts(const std::vector<std::uint32_t>& pids);
  JobCpuReading job_cpu(const JobOwner& owner);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// dcgm-exporter's --hpc-job-mapping-dir: every regular file directly in
/// `dir` named by a GPU index, its lines job ids (blank lines skipped; at
/// most 64 KiB a file and 256 files). False with *err when `dir` cannot be
/// listed (its files come and go as jobs start: one that vanishes is skipped).
bool read_hpc_job_mapping(const std::string& dir, HpcJobMap* out, std::string* err);

}  // namespace gpuenv
