// libFuzzer: any report file parses or not without crashing, and what parses
// gives figures in range: rates and times non-negative and finite, the wait
// share within 0 to 1, the peak memory within 0 to 1 PiB.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sense/python/speed_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto m = gpuenv::parse_speed_report(text);
  if (!m) return 0;
  if (m->steps < 0 || m->batches < 0 || !(m->wait_s >= 0)) std::abort();
  if (m->peak_mem && (*m->peak_mem < 0 || *m->peak_mem > gpuenv::kMaxPeakMemoryBytes)) std::abort();
  gpuenv::JobSpeed s = gpuenv::job_speed(*m, 10.0, 1e6);
  for (const auto* v : {&s.steps_per_s, &s.batches_per_s, &s.first_step_s, &s.exit_tail_s})
    if (*v && !(std::isfinite(**v) && **v >= 0)) std::abort();
  if (s.data_wait_share && !(*s.data_wait_share >= 0 && *s.data_wait_share <= 1)) std::abort();
  return 0;
}
