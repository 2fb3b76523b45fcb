#include "decide/run/peak_memory.h"

#include <cmath>

namespace gpuenv {

std::optional<JobPeakMemory> job_peak_memory(std::optional<std::int64_t> torch_bytes,
                                             std::optional<std::int64_t> nvml_bytes) {
  if (torch_bytes && *torch_bytes > 0) return JobPeakMemory{*torch_bytes, "torch"};
  if (nvml_bytes) return JobPeakMemory{*nvml_bytes, "nvml"};
  return std::nullopt;
}

std::optional<double> plan_error_pct(double measured_bytes, double planned_bytes) {
  if (!(planned_bytes > 0) || !std::isfinite(planned_bytes) || !std::isfinite(measured_bytes)) return std::nullopt;
  return 100.0 * (measured_bytes - planned_bytes) / planned_bytes;
}

}  // namespace gpuenv
