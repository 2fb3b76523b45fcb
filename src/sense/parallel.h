// Concurrency for sensing: independent queries (one per GPU, one per GPU
// pair, NVML beside the host files) run at once, each writing only its own
// slot, so the results come out in the same order as a serial run. A
// thread that cannot be started is not an error: its work runs on the
// threads that did start, or on the caller's. An exception thrown on a
// helper thread (bad_alloc) is rethrown on the caller's, for main to report.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gpuenv {

/// Calls fn(i) for every i in [0, n) on up to max_threads threads, the
/// caller's among them; returns when all calls have returned. fn must
/// only write state of its own i. An exception fn throws (bad_alloc) stops
/// the work and is rethrown here, on the caller's thread, once every
/// thread has stopped: never std::terminate.
template <typename F>
void parallel_for(std::size_t n, std::size_t max_threads, F fn) {
  std::atomic<std::size_t> next{0};
  std::mutex lock;
  std::exception_ptr error;
  auto work = [&] {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    } catch (...) {
      next = n;
      std::lock_guard<std::mutex> hold(lock);
      if (!error) error = std::current_exception();
    }
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
  if (error) std::rethrow_exception(error);
}

/// Runs fn on a thread of its own from construction until wait() (or
/// destruction); when no thread can be started, fn runs in the constructor.
class Background {
 public:
  template <typename F>
  explicit Background(F fn) {
    try {
      thread_ = std::thread([this, fn] {
        try {
          fn();
        } catch (...) {
          error_ = std::current_exception();
        }
      });
    } catch (const std::exception&) {
      fn();
    }
  }
  /// Joins; an exception of fn that wait() did not rethrow is dropped (a
  /// destructor must not throw), so call wait() on the normal path.
  ~Background() { join(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Returns once fn has returned; rethrows what fn threw on its thread.
  void wait() {
    join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace gpuenv
