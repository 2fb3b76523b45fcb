// gpuenv check: turns what was sensed, planned, measured and watched into
// a list of verdicts, in the spirit of DCGM's diagnostic levels. Pure: the
// sequence (flow/check.h) gathers the inputs, and act/render/bench/
// check_report.h shows the verdicts.
#pragma once

#include <string>
#include <vector>

#include "bench/bench.h"
#include "model/machine.h"
#include "model/plan.h"
#include "model/watched_gpu.h"

namespace gpuenv::bench {

enum class CheckOutcome { kPass, kWarn, kFail };

struct CheckItem {
  std::string name;  // "plan", "GPU 0 check_gemm", "GPU 0 clocks", ...
  CheckOutcome verdict = CheckOutcome::kPass;
  std::string message;
};

/// Sensing problems (fail), GPU health (decide/health.h: error -> fail,
/// warning -> warn), and the plan's warning (warn) and error (fail) notes.
std::vector<CheckItem> machine_items(const Machine& m, const Plan& plan);
/// Each case run: wrong or failed -> fail; skipped -> warn.
std::vector<CheckItem> result_items(const std::vector<Result>& results);
/// What NVML saw during a long check, judged by decide/health.h: new
/// uncorrectable ECC errors, failed row remapping, hardware slowdowns ->
/// fail; software thermal slowdown, pending remapping -> warn.
std::vector<CheckItem> watch_items(const std::vector<WatchedGpu>& watched);

/// True when something was checked (`items` is not empty) and nothing
/// failed: a check that checked nothing does not pass.
bool passed(const std::vector<CheckItem>& items);

}  // namespace gpuenv::bench
