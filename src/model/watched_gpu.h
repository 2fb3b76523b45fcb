// What `gpuenv check --long` saw of each GPU while it loaded it: the NVML
// watcher (sense/nvml/nvml_watch.h) sums a GPU's readings into one
// WatchedGpu, and check's verdicts (bench/check.h) judge it.
#pragma once

#include <optional>
#include <string>

namespace gpuenv {

/// What `gpuenv check --long` saw of one GPU while it loaded it
/// (sense/nvml/nvml_watch.h): extremes over the readings, the clock-event
/// reasons seen, and the memory-error counters of the first and last.
/// Unknown (not supported, no NVML) stays nullopt.
struct WatchedGpu {
  std::string uuid;
  int samples = 0;
  std::optional<unsigned> sm_mhz_min, sm_mhz_max, memory_mhz_min, temperature_max_c, power_max_w;
  std::optional<unsigned long long> clock_events;  // union of the reasons seen
  std::optional<unsigned long long> ecc_uncorrected_before, ecc_uncorrected_after;
  std::optional<unsigned long long> ecc_corrected_before, ecc_corrected_after;
  std::optional<bool> remapping_pending, remapping_failed;
};

}  // namespace gpuenv
