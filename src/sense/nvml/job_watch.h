// Watching a job that `gpuenv run` started: a thread, at the lowest CPU
// priority, samples every interval the job's GPUs through NVML (utilisation,
// the job's own GPU memory, power, SM clock, clock-event reasons, PCIe
// throughput) and its process tree through /proc (CPU time, workers), into
// a bounded Timeline (model/job.h). NVML is loaded on that thread, after the
// job has started; when it fails, /proc is still sampled and the reason is
// reported once. The watcher holds no lock the job could wait on and never
// signals it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "model/job.h"

namespace gpuenv {

struct JobWatchOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::vector<std::string> uuids;  // the GPUs to watch ("GPU-..."); empty: none
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
  /// the samples in *timeline.
  void stop(JobContext* context, Timeline* timeline);

 private:
  struct Impl;
  void loop();
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::mutex mutex_;  // only the watcher and stop() take it
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace gpuenv
