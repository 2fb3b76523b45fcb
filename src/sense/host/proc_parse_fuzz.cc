// libFuzzer target for sense/host/proc_parse.h. The first byte picks the parser
// ('s': /proc/PID/stat, else: a children list); the rest is the file. The
// results are checked against what must hold for any input.
#include <cstdio>
#include <cstdlib>

#include "sense/host/proc_parse.h"

namespace gpuenv {
namespace {

void check_that(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, line, what);
  std::abort();
}
#define CHECK(cond) check_that((cond), #cond, __LINE__)

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

}  // namespace
}  // namespace gpuenv

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == 's') gpuenv::check_stat(text);
  else gpuenv::check_pids(text);
  return 0;
}
