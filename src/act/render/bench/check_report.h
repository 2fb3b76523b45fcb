// How `gpuenv check` shows its verdicts (bench/check.h): a line per
// verdict and the outcome, or JSON with the figures and what NVML watched.
#pragma once

#include <nlohmann/json.hpp>
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
nlohmann::json check_json(const std::vector<CheckItem>& items, bool long_check, double seconds,
                          const std::vector<Result>& results, const std::vector<WatchedGpu>& watched);

/// `gpuenv check`: its verdicts, the GPU tests' results and what NVML watched.
struct CheckReport {
  const std::vector<CheckItem>& items;
  bool long_check = false;
  double seconds = 0;
  const std::vector<Result>& results;
  const std::vector<WatchedGpu>& watched;
};
nlohmann::json report_json(const CheckReport& r);
/// render_check's: the results and the watch show only through their verdicts.
std::string report_text(const CheckReport& r, const Style& style);

}  // namespace gpuenv::bench
