// libFuzzer target for sense/host/proc_parse.h. The first byte picks the parser
// ('s': /proc/PID/stat, 'S': /proc/PID/status, 'g': /proc/PID/cgroup, 'e':
// /proc/PID/environ, 'l': a CPU list, 'm': cpu.max, cpu.stat and one-integer
// files, else: a children list); the rest is the file. The results are
// checked against what must hold for any input.
#include <cstdio>
#include <cstdlib>

#include "model/gpu_jobs.h"
#include "sense/host/proc_parse.h"
#include "fuzz_check.h"

namespace gpuenv {
namespace {

void check_stat(std::string_view text) {
  ProcStat s;
  std::string err;
  if (!parse_proc_stat(text, &s, &err)) return CHECK(!err.empty());
  CHECK(s.pid > 0);
  CHECK(s.ppid >= 0);
  CHECK(s.comm.size() < text.size());
  CHECK(text.find(s.comm) != std::string_view::npos);
}

void check_pids(std::string_view text) {
  for (int pid : parse_pid_list(text)) CHECK(pid > 0 && pid < (1 << 22));
}

void check_status(std::string_view text) {
  ProcStatus s = parse_proc_status(text);
  CHECK(!s.ppid || *s.ppid >= 0);
  CHECK(text.find(s.cpus_allowed_list) != std::string_view::npos);
}

void check_cgroup(std::string_view text) {
  ProcCgroup cg = parse_proc_cgroup(text);
  CHECK(cg.path.empty() == (cg.version == 0));
  CHECK(cg.path.empty() || (cg.path[0] == '/' && cg.path.find('\n') == std::string::npos));
  CHECK(text.find(cg.path) != std::string_view::npos);
}

void check_environ(std::string_view text) {
  for (const auto& [name, value] : parse_attribution_env(text)) {
    bool kept = false;
    for (const char* k : kAttributionEnv) kept |= name == k;
    CHECK(kept);
    CHECK(value.size() <= kMaxEnvValueBytes);
    CHECK(value.find('\0') == std::string::npos);
  }
}

void check_values(std::string_view text) {
  if (std::optional<int> n = cpu_list_count(text)) CHECK(*n > 0 && *n < (1 << 20));
  if (std::optional<double> cores = parse_cpu_max(text)) CHECK(*cores >= 0);
  keyed_value(text, "usage_usec");
  single_integer(text);
}

}  // namespace
}  // namespace gpuenv

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 's': gpuenv::check_stat(text); break;
    case 'S': gpuenv::check_status(text); break;
    case 'g': gpuenv::check_cgroup(text); break;
    case 'e': gpuenv::check_environ(text); break;
    case 'l': case 'm': gpuenv::check_values(text); break;
    default: gpuenv::check_pids(text);
  }
  return 0;
}
