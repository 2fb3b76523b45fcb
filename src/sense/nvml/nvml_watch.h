// Watching GPUs through NVML while `gpuenv check --long` loads them: a
// periodic thread (sys/periodic.h) reads each GPU's live state
// (sense/nvml/nvml_reading.h) every interval, and the watch keeps the
// extremes of the clocks, temperature and power, the reasons clocks were
// held back, and the ECC and row-remapping counters of the first and last
// readings, as a WatchedGpu (model/watched_gpu.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "model/watched_gpu.h"
#include "model/machine.h"
#include "sys/periodic.h"

namespace gpuenv {

class NvmlWatch {
 public:
  NvmlWatch();
  ~NvmlWatch();
  NvmlWatch(const NvmlWatch&) = delete;
  NvmlWatch& operator=(const NvmlWatch&) = delete;

  /// Loads NVML from `library`, finds the GPUs by UUID ("GPU-..."), takes
  /// the first reading and starts the thread. False with the Problem in
  /// *err (sense/nvml/nvml_session.h); the check then runs unwatched.
  bool start(const std::string& library, const std::vector<std::string>& uuids, std::chrono::milliseconds interval,
             Problem* err);
  /// Stops the thread, takes the last reading, and returns what was seen.
  std::vector<WatchedGpu> stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Periodic thread_;
};

}  // namespace gpuenv
