// The one shape of a thread that does a round of work every interval until
// told to stop: `gpuenv export`'s NVML sampler and its kubelet pod-resources
// watcher, `gpuenv check --long`'s watcher and `gpuenv run`'s job watcher are
// each one of these.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace gpuenv {

/// Runs `first` once on its own thread, then `round` every interval (the
/// interval counts from the end of one round to the start of the next)
/// until stop(). The rounds run without the lock, so a round may take its
/// time; stop() wakes the wait at once and waits for at most the one round
/// in progress.
class Periodic {
 public:
  Periodic() = default;
  ~Periodic() { stop(); }
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  /// Starts the thread and returns at once. Not while running.
  void start(std::chrono::milliseconds interval, std::function<void()> round, std::function<void()> first = {});
  /// Ends the thread; nothing of it runs after this returns. A no-op when
  /// not running.
  void stop();

 private:
  void loop(std::chrono::milliseconds interval, const std::function<void()>& round,
            const std::function<void()>& first);

  std::thread thread_;
  std::mutex mutex_;  // stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace gpuenv
