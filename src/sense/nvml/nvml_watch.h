// Watching GPUs through NVML while `gpuenv check --long` loads them: clocks,
// temperature, power, the reasons clocks were held back, and the ECC and
// row-remapping counters before and after. A thread samples every interval.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gpuenv {

/// What was seen on one GPU; unknown (not supported, no NVML) stays nullopt.
struct WatchedGpu {
  std::string uuid;
  int samples = 0;
  std::optional<unsigned> sm_mhz_min, sm_mhz_max, memory_mhz_min, temperature_max_c, power_max_w;
  std::optional<unsigned long long> clock_events;  // union of the reasons seen
  std::optional<unsigned long long> ecc_uncorrected_before, ecc_uncorrected_after;
  std::optional<unsigned long long> ecc_corrected_before, ecc_corrected_after;
  std::optional<bool> remapping_pending, remapping_failed;
};

class NvmlWatch {
 public:
  NvmlWatch();
  ~NvmlWatch();
  NvmlWatch(const NvmlWatch&) = delete;
  NvmlWatch& operator=(const NvmlWatch&) = delete;

  /// Loads NVML from `library`, finds the GPUs by UUID ("GPU-..."), reads
  /// the counters and starts sampling. False with the reason in *err; the
  /// check then runs unwatched.
  bool start(const std::string& library, const std::vector<std::string>& uuids, std::chrono::milliseconds interval,
             std::string* err);
  /// Stops sampling, reads the counters again, and returns what was seen.
  std::vector<WatchedGpu> stop();

 private:
  struct Impl;
  void loop();
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace gpuenv
