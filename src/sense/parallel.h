// Concurrency for sensing: independent queries (one per GPU, one per GPU
// pair, NVML beside the host files) run at once, each writing only its own
// slot, so the results come out in the same order as a serial run. A
// thread that cannot be started is not an error: its work runs on the
// threads that did start, or on the caller's (sensing never throws).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

namespace gpuenv {

/// Calls fn(i) for every i in [0, n) on up to max_threads threads, the
/// caller's among them; returns when all calls have returned. fn must
/// only write state of its own i.
template <typename F>
void parallel_for(std::size_t n, std::size_t max_threads, F fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> helpers;
  std::size_t wanted = std::min(n, std::max<std::size_t>(max_threads, 1));
  try {
    while (helpers.size() + 1 < wanted) helpers.emplace_back(work);
  } catch (const std::exception&) {
    // std::system_error (no thread) or bad_alloc: fewer helpers then.
  }
  work();
  for (std::thread& t : helpers) t.join();
}

/// Runs fn on a thread of its own from construction until wait() (or
/// destruction); when no thread can be started, fn runs in the constructor.
class Background {
 public:
  template <typename F>
  explicit Background(F fn) {
    try {
      thread_ = std::thread(fn);
    } catch (const std::exception&) {
      fn();
    }
  }
  ~Background() { wait(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Returns once fn has returned.
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace gpuenv
