// Watching a job that `gpuenv run` started: a periodic thread
// (sys/periodic.h), at the lowest CPU priority, samples every interval the
// job's GPUs, or its MIG device, through NVML (their live state from
// sense/nvml/nvml_reading.h: utilisation, power, SM clock, clock-event
// reasons; beside it the job's own GPU memory and the PCIe throughput; NVML
// GPM) and its process tree through /proc (CPU time, workers), into a
// bounded Timeline (model/job.h). NVML is loaded on that thread (one
// NvmlSession), after the job has started; when it fails, /proc is still
// sampled and the reason is reported once. The watcher holds no lock the
// job could wait on and never signals it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "sys/periodic.h"

namespace gpuenv {

struct JobWatchOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::vector<std::string> uuids;  // the GPUs ("GPU-...") or MIG device ("MIG-...") to watch; empty: none
  pid_t root = 0;                  // the job's processes are this one's descendants
  std::chrono::milliseconds interval{1000};
  std::string proc = "/proc";
  /// Called once, on the watcher's thread, when the GPUs cannot be sampled.
  std::function<void(const std::string&)> on_unwatched;
};

class JobWatch {
 public:
  JobWatch();
  ~JobWatch();
  JobWatch(const JobWatch&) = delete;
  JobWatch& operator=(const JobWatch&) = delete;

  /// Starts the thread and returns at once.
  void start(JobWatchOptions options);
  /// Stops the thread (after at most one sample in progress) and returns what
  /// it saw: the GPUs' capacities and why they were unwatched in *context,
  /// the samples in *timeline, and (when given) in *peak_bytes the most GPU
  /// memory NVML listed for the job's processes on one GPU in one sample
  /// (left as it is when NVML never said).
  void stop(JobContext* context, Timeline* timeline, std::optional<std::int64_t>* peak_bytes = nullptr);

 private:
  struct Impl;
  void begin();  // on the thread, before the first sample
  std::unique_ptr<Impl> impl_;
  Periodic thread_;  // its lock is taken only by the watcher and stop()
};

}  // namespace gpuenv
