// Shared pieces of the CUDA plugin: errors as values written into the
// result, RAII for CUDA resources, and the timing method (warm-up, CUDA
// events, a batch of operations per trial, several trials).
#pragma once

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "sense/cuda/bench_plugin_abi.h"

namespace gpuenv_plugin {

using Result = gpuenv_bench_result;
using Params = gpuenv_bench_params;

/// Sets status and a printf-style message; returns false so that callers
/// can write `return fail(r, ...)`.
bool fail(Result* r, int status, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
/// Appends to result->detail.
void add_detail(Result* r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// False, with "call: CUDA's message" in the result, unless e is cudaSuccess.
bool cuda_ok(cudaError_t e, const char* call, Result* r);

// Every CUDA call in the plugin goes through CK: on failure the function
// returns false with the call named in the result.
#define CK(call)                                                   \
  do {                                                             \
    if (!::gpuenv_plugin::cuda_ok((call), #call, r)) return false; \
  } while (0)

/// Device memory, freed when destroyed.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory() {
    if (p_) cudaFree(p_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  bool alloc(size_t bytes, Result* r);
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

/// Host memory: page-locked (cudaMallocHost) or pageable and touched.
class HostMemory {
 public:
  HostMemory() = default;
  ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  bool alloc(size_t bytes, bool pinned, Result* r);
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  bool pinned_ = false;
};

class Stream {
 public:
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  bool create(Result* r);
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  bool create(Result* r);
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

/// Enqueues one operation on the stream; false with the result filled on failure.
using Op = std::function<bool()>;

/// Seconds taken by `iters` operations queued between two events.
bool time_batch(cudaStream_t s, const Op& op, int iters, double* seconds, Result* r);

/// The method of every throughput case: p->warmup untimed operations, one
/// timed to size the batch (enough operations for p->min_trial_s), then
/// p->trials batches; each sample is seconds per operation.
bool time_trials(const Params* p, cudaStream_t s, const Op& op, Result* r, int max_iters = 100000);

/// Appends a sample (seconds per operation), keeping at most the ABI's maximum.
void add_sample(Result* r, double seconds);

/// A kernel launch configuration covering the device: blocks per SM times SMs.
int grid_for(int device, int blocks_per_sm);

/// Counts device words that differ from fill_pattern(seed, i); the count in
/// *wrong (device memory freed here).
bool count_pattern_mismatches(const uint32_t* data, size_t words, uint64_t seed, cudaStream_t s,
                              unsigned long long* wrong, Result* r);
/// Fills device words with fill_pattern(seed, i).
bool fill_pattern_device(uint32_t* data, size_t words, uint64_t seed, cudaStream_t s, Result* r);

// The operations, one per file.
bool run_gemm(const Params* p, Result* r);
bool run_sustained_gemm(const Params* p, Result* r);
bool run_copy_kernel(const Params* p, Result* r);
bool run_memcpy_d2d(const Params* p, Result* r);
bool run_h2d(const Params* p, Result* r);
bool run_d2h(const Params* p, Result* r);
bool run_memtest(const Params* p, Result* r);
bool run_launch(const Params* p, Result* r);
bool run_p2p(const Params* p, Result* r);
bool run_p2p_via_host(const Params* p, Result* r);
bool run_all_reduce(const Params* p, Result* r);

}  // namespace gpuenv_plugin
