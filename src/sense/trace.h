// GPUENV_TRACE=1: how long each sensing step and each NVML function took,
// summed per name and printed on stderr when sensing ends. For finding
// what makes `detect` slow on a given machine; off by default.
//
// Thread-safe: GPUs, GPU pairs and the host are sensed concurrently, so an
// NVML function's total is the sum over threads (CPU-side cost), while the
// "(wall)" scopes around each concurrent phase say what it cost in time.
#pragma once

#include <chrono>

namespace gpuenv::trace {

/// True when GPUENV_TRACE is set (read once).
bool enabled();

/// Adds `ms` to the total for `name` (a string literal; kept by pointer).
/// Safe to call from several threads.
void add(const char* name, double ms);

/// Prints the totals ("gpuenv: trace: NAME  N calls  T ms", or through the
/// sink), then clears them.
void flush();

/// Where flush() sends each total instead of stderr: the CLI's log
/// (act/log.h), so that --log-format json covers them too.
using Sink = void (*)(const char* name, int calls, double ms);
void set_sink(Sink sink);

/// Times a scope into `name` when tracing is on.
class Scope {
 public:
  explicit Scope(const char* name) : name_(enabled() ? name : nullptr) {
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~Scope() {
    if (!name_) return;
    std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - start_;
    add(name_, d.count());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpuenv::trace
