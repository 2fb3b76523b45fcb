// How `gpuenv check` shows its verdicts (bench/check.h): a line per
// verdict and the outcome, or JSON with the figures and what NVML watched.
#pragma once

#include <string>
#include <vector>

#include "act/render/machine_report.h"
#include "bench/check.h"
#include "model/watched_gpu.h"

namespace gpuenv::bench {

/// "PASS  GPU 0 check_gemm  ..." a line per verdict, then "gpuenv check
/// --quick: passed in 2.5 s" (FAILED; "FAILED (nothing was checked)" for none).
std::string render_check(const std::vector<CheckItem>& items, bool long_check, double seconds, const Style& style);
/// The verdicts, the results (as bench's JSON shows them) and the watched GPUs.
std::string check_json(const std::vector<CheckItem>& items, bool long_check, double seconds,
                       const std::vector<Result>& results, const std::vector<WatchedGpu>& watched);

}  // namespace gpuenv::bench
