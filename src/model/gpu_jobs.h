// The jobs on a node's GPUs, as `gpuenv export` sees them without wrapping
// them (docs/metrics.md, "Jobs"): the processes NVML lists on each device
// (DeviceReading::processes), what /proc and the cgroup tree say of each
// (ProcessFacts, sense/host/process_facts.h), the job each belongs to
// (JobOwner, decide/fleet/attribute.h) and the CPU its job used
// (JobCpuReading). Pure data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuenv {

/// A process NVML lists on a GPU or a MIG device.
struct GpuProcess {
  std::uint32_t pid = 0;                            // the host's PID, as NVML names it
  std::optional<std::uint64_t> used_memory_bytes;   // nullopt: NVML did not say (no permission, MIG)
  /// nvmlDeviceGetProcessUtilization's smUtil of the newest sample since the
  /// round before, 0..1; nullopt: not supported (MIG devices) or no sample.
  std::optional<double> sm_ratio;
  friend bool operator==(const GpuProcess&, const GpuProcess&) = default;
};

/// The environment variables of a process that attribution reads; no other
/// variable is ever kept.
inline constexpr const char* kAttributionEnv[] = {"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_USER", "GPUENV_JOB_ID",
                                                  "HOSTNAME"};

/// What the host's /proc says of one process; what could not be read stays
/// empty (never guessed).
struct ProcessFacts {
  std::uint32_t pid = 0;
  bool found = false;                  // /proc/PID was there
  std::optional<std::uint32_t> uid;    // real uid (/proc/PID/status)
  std::string user;                    // uid's name; "" when it has none here
  /// The process's cgroup, where its CPU is accounted: the v1 path of the
  /// cpuacct (else cpu) controller, else the cgroup v2 "0::" path, else the
  /// v1 name=systemd path; "" unknown. (A pure v2 host lists only "0::"; a
  /// hybrid one lists "0::" too, for a v2 tree without controllers, while
  /// Slurm's and the kubelet's cgroups are v1's.)
  std::string cgroup;
  int cgroup_version = 0;              // 2, 1, or 0 unknown
  std::map<std::string, std::string> env;  // only kAttributionEnv's names
  /// The root of the process's tree: its topmost ancestor in the same
  /// session that is not the session leader (the process itself when it
  /// leads its session or its parent is PID 1); `gpuenv run`'s child when
  /// one is on the way up.
  std::uint32_t root_pid = 0;
  std::string root_command;            // the root's comm (/proc/PID/comm)
  std::optional<std::uint32_t> root_uid;
  std::string root_user;
  friend bool operator==(const ProcessFacts&, const ProcessFacts&) = default;
};

/// The job a GPU process belongs to.
struct JobOwner {
  std::string scheduler = "unknown";  // "slurm" | "kubernetes" | "none" | "unknown"
  /// Slurm: the job id ("1234", an array task "1234_7" as Slurm names it);
  /// Kubernetes: "NAMESPACE/POD"; none: GPUENV_JOB_ID when `gpuenv run`
  /// started it, else "pid-ROOT" (its tree's root); unknown: "unknown".
  std::string job = "unknown";
  std::string user;  // the job's user name ("" unknown; a uid as digits when it has no name here)
  std::string step;  // Slurm's step ("0", "batch", "extern"); "" none
  std::string ns, pod, container;  // Kubernetes
  std::string command;             // none: the tree root's comm
  /// Where the job was told from: "cgroup" | "environ" | "hpc-job-mapping" |
  /// "pod-resources" | "process-tree" | "" (unknown).
  std::string source;
  std::string cgroup;  // the job's cgroup, relative to the cgroup root ("" none): its CPU is read there
  std::uint32_t root_pid = 0;  // scheduler "none": the tree's root (its CPU is the tree's)
  friend bool operator==(const JobOwner&, const JobOwner&) = default;
};

/// A job's identity in the ledger: scheduler and job.
using JobKey = std::pair<std::string, std::string>;
inline JobKey job_key(const JobOwner& o) { return {o.scheduler, o.job}; }

/// The CPU a job used, read once a round (sense/host/process_facts.h).
struct JobCpuReading {
  /// CPU seconds the job's cgroup (or, without one, its process tree) has
  /// used, all time; nullopt unknown.
  std::optional<double> usage_s;
  /// The cores it may use: cpu.max's quota/period, else its cpuset's count;
  /// nullopt unknown.
  std::optional<double> cores_allowed;
  /// Each of the job's processes (cgroup.procs, or the tree) and its CPU
  /// seconds, all time; at most kMaxJobProcesses.
  std::vector<std::pair<std::uint32_t, double>> process_cpu_s;
  friend bool operator==(const JobCpuReading&, const JobCpuReading&) = default;
};

/// dcgm-exporter's --hpc-job-mapping-dir, read: each file's name (a GPU's
/// NVML index, "0") and the job ids it holds, one a line, in order.
using HpcJobMap = std::map<std::string, std::vector<std::string>>;

/// The most processes of one job read a round; the rest are not counted.
inline constexpr std::size_t kMaxJobProcesses = 4096;

}  // namespace gpuenv
