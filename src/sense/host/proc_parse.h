// Parsers of the /proc and cgroup files the job watcher (sense/host/proc_tree.cc)
// and the exporter's job attribution (sense/host/process_facts.cc) read:
// text the kernel writes but a process shapes (its comm, its environment, its
// cgroup's name), so each parser takes any bytes and is fuzzed
// (proc_parse_fuzz.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuenv {

/// The fields of /proc/PID/stat the watcher uses.
struct ProcStat {
  int pid = 0;
  std::string comm;  // between the first '(' and the last ')': it may hold spaces and parentheses
  char state = '?';
  int ppid = 0;
  std::uint64_t utime = 0, stime = 0;  // clock ticks
  int pgrp = 0, session = 0;           // its process group and session (the leader's PID)
  std::uint64_t starttime = 0;         // clock ticks after boot it started (0: not given); with the PID, one process
};

/// Parses one /proc/PID/stat line. False with the reason in *err for text
/// that is not one (too few fields, no "(comm)", a field not a number).
bool parse_proc_stat(std::string_view text, ProcStat* out, std::string* err);

/// The PIDs in /proc/PID/task/TID/children ("12 345 "): positive numbers
/// below 2^22 (PID_MAX_LIMIT); anything else is skipped.
std::vector<int> parse_pid_list(std::string_view text);

/// The fields of /proc/PID/status attribution uses; absent or malformed
/// lines leave theirs unknown.
struct ProcStatus {
  std::optional<std::uint32_t> uid;  // "Uid:"'s first id, the real one
  std::optional<int> ppid;           // "PPid:"
  std::string cpus_allowed_list;     // "Cpus_allowed_list:" ("0-3,8"), "" unknown
};
ProcStatus parse_proc_status(std::string_view text);

/// A process's cgroup, from /proc/PID/cgroup ("ID:CONTROLLERS:PATH" lines).
struct ProcCgroup {
  std::string path;  // "" unknown
  int version = 0;   // 2, 1, or 0 unknown
};

/// The cgroup a process's CPU is accounted in: the path of a v1 hierarchy
/// holding the cpuacct (else cpu) controller, else the v2 "0::" path, else
/// the v1 name=systemd one. A v1 CPU hierarchy wins over "0::" because a
/// host with both (systemd's hybrid layout) accounts CPU in v1 and leaves
/// its v2 tree without controllers; a pure v2 host has only the "0::" line.
/// The first line of each kind counts (a cgroup's name may hold a newline:
/// a forged line comes after the real one). Lines without a path starting
/// with '/' are skipped.
ProcCgroup parse_proc_cgroup(std::string_view text);

/// A PID Linux can hand out: from 1 to below PID_MAX_LIMIT (1 << 22 on 64-bit Linux).
bool plausible_pid(long long pid);

/// The variables of /proc/PID/environ (NUL-separated "NAME=value") named in
/// kAttributionEnv (model/gpu_jobs.h), no other; the first of a name wins,
/// as getenv's does. A value is kept to its first kMaxEnvValueBytes bytes.
std::map<std::string, std::string> parse_attribution_env(std::string_view text);
inline constexpr std::size_t kMaxEnvValueBytes = 256;

/// The number of CPUs in a kernel CPU list ("0-3,8,10-11" -> 7; a trailing
/// newline is allowed). nullopt for an empty list or text that is not one
/// (a range running backwards, a CPU number of 2^20 or more).
std::optional<int> cpu_list_count(std::string_view text);

/// cgroup v2's cpu.max ("QUOTA PERIOD", "max PERIOD"): QUOTA/PERIOD in
/// cores; nullopt for "max" (no limit) and for text that is not one.
std::optional<double> parse_cpu_max(std::string_view text);

/// The value of `key` in a flat-keyed cgroup file ("usage_usec 123\n...",
/// cpu.stat); nullopt when absent or not a number.
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key);

/// A file holding one integer (cpuacct.usage, cpu.cfs_quota_us: "-1\n");
/// nullopt when it is not one.
std::optional<std::int64_t> single_integer(std::string_view text);

}  // namespace gpuenv
