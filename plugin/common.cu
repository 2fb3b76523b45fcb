#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common.h"
#include "random.h"

namespace gpuenv_plugin {
namespace {

void vappend(char* buf, size_t size, const char* fmt, va_list ap) {
  size_t used = strnlen(buf, size);
  if (used + 1 >= size) return;
  vsnprintf(buf + used, size - used, fmt, ap);
}

__global__ void fill_pattern_kernel(uint32_t* data, size_t words, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x)
    data[i] = fill_pattern(seed, i);
}

__global__ void count_mismatch_kernel(const uint32_t* data, size_t words, uint64_t seed, unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x)
    mine += data[i] != fill_pattern(seed, i);
  if (mine) atomicAdd(wrong, mine);
}

}  // namespace

bool fail(Result* r, int status, const char* fmt, ...) {
  r->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
  return false;
}

void add_detail(Result* r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vappend(r->detail, sizeof r->detail, fmt, ap);
  va_end(ap);
}

bool cuda_ok(cudaError_t e, const char* call, Result* r) {
  if (e == cudaSuccess) return true;
  cudaGetLastError();  // clear a non-sticky error so later cases can run
  return fail(r, GPUENV_BENCH_ERROR, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

bool DeviceMemory::alloc(size_t bytes, Result* r) {
  CK(cudaMalloc(&p_, bytes));
  bytes_ = bytes;
  return true;
}

HostMemory::~HostMemory() {
  if (!p_) return;
  if (pinned_)
    cudaFreeHost(p_);
  else
    std::free(p_);
}

bool HostMemory::alloc(size_t bytes, bool pinned, Result* r) {
  pinned_ = pinned;
  if (pinned) {
    CK(cudaMallocHost(&p_, bytes));
  } else {
    p_ = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!p_) return fail(r, GPUENV_BENCH_ERROR, "aligned_alloc(%zu): out of host memory", bytes);
  }
  std::memset(p_, 0, bytes);  // touch every page before timing
  return true;
}

bool Stream::create(Result* r) {
  CK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  return true;
}

bool Event::create(Result* r) {
  CK(cudaEventCreate(&e_));
  return true;
}

bool time_batch(cudaStream_t s, const Op& op, int iters, double* seconds, Result* r) {
  Event start, stop;
  if (!start.create(r) || !stop.create(r)) return false;
  CK(cudaEventRecord(start.get(), s));
  for (int i = 0; i < iters; ++i)
    if (!op()) return false;
  CK(cudaEventRecord(stop.get(), s));
  CK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  *seconds = ms / 1e3;
  return true;
}

void add_sample(Result* r, double seconds) {
  if (r->nsamples < GPUENV_BENCH_MAX_SAMPLES) r->samples[r->nsamples++] = seconds;
}

bool time_trials(const Params* p, cudaStream_t s, const Op& op, Result* r, int max_iters) {
  for (int i = 0; i < p->warmup; ++i)
    if (!op()) return false;
  double one = 0;
  if (!time_batch(s, op, 1, &one, r)) return false;
  int iters = one > 0 ? static_cast<int>(std::ceil(p->min_trial_s / one)) : max_iters;
  iters = iters < 1 ? 1 : (iters > max_iters ? max_iters : iters);
  int trials = p->trials < 1 ? 1 : (p->trials > GPUENV_BENCH_MAX_SAMPLES ? GPUENV_BENCH_MAX_SAMPLES : p->trials);
  for (int t = 0; t < trials; ++t) {
    double seconds = 0;
    if (!time_batch(s, op, iters, &seconds, r)) return false;
    add_sample(r, seconds / iters);
  }
  add_detail(r, "%d trials x %d, median; ", trials, iters);
  return true;
}

int grid_for(int device, int blocks_per_sm) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) sms = 80;
  return sms * blocks_per_sm;
}

bool fill_pattern_device(uint32_t* data, size_t words, uint64_t seed, cudaStream_t s, Result* r) {
  int device = 0;
  CK(cudaGetDevice(&device));
  fill_pattern_kernel<<<grid_for(device, 4), 256, 0, s>>>(data, words, seed);
  CK(cudaGetLastError());
  return true;
}

bool count_pattern_mismatches(const uint32_t* data, size_t words, uint64_t seed, cudaStream_t s,
                              unsigned long long* wrong, Result* r) {
  DeviceMemory counter;
  if (!counter.alloc(sizeof(unsigned long long), r)) return false;
  CK(cudaMemsetAsync(counter.as<void>(), 0, sizeof(unsigned long long), s));
  int device = 0;
  CK(cudaGetDevice(&device));
  count_mismatch_kernel<<<grid_for(device, 4), 256, 0, s>>>(data, words, seed, counter.as<unsigned long long>());
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(wrong, counter.as<void>(), sizeof *wrong, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  return true;
}

}  // namespace gpuenv_plugin
