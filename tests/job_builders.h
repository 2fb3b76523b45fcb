// Builders for watched Jobs in tests, as builders.h makes Machines: the
// verdict tests of explain's feedback (unit and end to end) share one job.
#pragma once

#include <string>
#include <vector>

#include "model/job.h"

namespace gpuenv::testing {

/// A watched job of `argv` run in `cwd` (its command_fp as the store keys it),
/// started 2025-01-01T00:00:00Z, lasting `duration_s`: 30 samples at 8 % busy
/// with one core and no DataLoader workers on an H200 with 16 CPUs, so
/// input-bound, and --tune's num_workers=15,pin_memory=True,persistent_workers=True.
Job input_bound_job(const std::vector<std::string>& argv, const std::string& cwd, double duration_s = 0);

}  // namespace gpuenv::testing
