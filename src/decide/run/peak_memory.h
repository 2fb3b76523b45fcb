// The job's peak GPU memory and how far it was from its plan (issue 40, 4):
// plain functions of what the hook and the watcher measured and of what
// `gpuenv plan-memory -- CMD` planned. docs/feedback.md, "Peak memory".
#pragma once

#include <cstdint>
#include <optional>

#include "model/job.h"

namespace gpuenv {

/// The job's peak on one GPU: torch's max_memory_allocated when the hook
/// read one above 0 (the figure plan-memory predicts), else NVML's memory of
/// the job's processes; nullopt when neither said.
std::optional<JobPeakMemory> job_peak_memory(std::optional<std::int64_t> torch_bytes,
                                             std::optional<std::int64_t> nvml_bytes);

/// How far the measured peak is from the planned one, in % of the plan
/// (+4.7: 4.7 % over it); nullopt when the plan is not above 0.
std::optional<double> plan_error_pct(double measured_bytes, double planned_bytes);

}  // namespace gpuenv
