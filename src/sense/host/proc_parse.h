// Parsers of the /proc files the job watcher reads (sense/host/proc_tree.cc):
// text the kernel writes but a process shapes (its comm), so each parser
// takes any bytes and is fuzzed (proc_parse_fuzz.cc).
#pragma once

#include <cstdint>
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
};

/// Parses one /proc/PID/stat line. False with the reason in *err for text
/// that is not one (too few fields, no "(comm)", a field not a number).
bool parse_proc_stat(std::string_view text, ProcStat* out, std::string* err);

/// The PIDs in /proc/PID/task/TID/children ("12 345 "): positive numbers
/// below 2^22 (PID_MAX_LIMIT); anything else is skipped.
std::vector<int> parse_pid_list(std::string_view text);

}  // namespace gpuenv
