// Device memory bandwidth (a vectorised copy kernel, cudaMemcpy D2D),
// host<->device copies, and the memory pattern test of `check --long`.
#include <algorithm>
#include <chrono>
#include <vector>

#include "common.h"
#include "random.h"

namespace gpuenv_plugin {
namespace {

constexpr int kUnroll = 4;
constexpr int kThreads = 256;

// Two layouts of the same copy: 16-byte loads and stores, kUnroll in flight
// per thread, streaming hints so the copy does not evict L2 for nothing.
// Grid-stride: a thread's kUnroll elements lie a whole grid apart.
__global__ void __launch_bounds__(kThreads)
    copy_strided(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Tiled: each block copies contiguous 16 KiB tiles, tile after tile.
__global__ void __launch_bounds__(kThreads) copy_tiled(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  const size_t tile = size_t(kThreads) * kUnroll, tiles = n / tile;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    size_t base = t * tile + threadIdx.x;
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + base + u * kThreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + base + u * kThreads, v[u]);
  }
  for (size_t i = tiles * tile + blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

using CopyKernel = void (*)(const int4*, int4*, size_t);

struct DevicePair {
  DeviceMemory src, dst;
  Stream stream;
  size_t words = 0;
};

bool setup_pair(const Params* p, DevicePair* d, Result* r) {
  size_t bytes = (p->bytes + 15) / 16 * 16;
  d->words = bytes / 4;
  if (!d->stream.create(r) || !d->src.alloc(bytes, r) || !d->dst.alloc(bytes, r)) return false;
  CK(cudaMemsetAsync(d->dst.as<void>(), 0, bytes, d->stream.get()));
  return fill_pattern_device(d->src.as<uint32_t>(), d->words, p->seed, d->stream.get(), r);
}

bool verify_words(const uint32_t* data, size_t words, uint64_t seed, cudaStream_t s, Result* r) {
  unsigned long long wrong = 0;
  if (!count_pattern_mismatches(data, words, seed, s, &wrong, r)) return false;
  r->mismatches = wrong;
  if (wrong) return fail(r, GPUENV_BENCH_WRONG, "%llu of %zu copied words are wrong", wrong, words);
  add_detail(r, "copy verified");
  return true;
}

Op kernel_copy(const Params* p, DevicePair* d, CopyKernel kernel, Result* r) {
  int grid = grid_for(p->device, 8);
  return [=] {
    kernel<<<grid, kThreads, 0, d->stream.get()>>>(d->src.as<const int4>(), d->dst.as<int4>(), d->words / 4);
    CK(cudaGetLastError());
    return true;
  };
}

// The faster layout on this GPU, as the GEMMs keep the fastest algorithm.
bool pick_layout(const Params* p, DevicePair* d, Op* op, Result* r) {
  const CopyKernel kernels[] = {copy_tiled, copy_strided};
  const char* names[] = {"tiled", "grid-stride"};
  double best = 0;
  int pick = 0;
  for (int i = 0; i < 2; ++i) {
    Op candidate = kernel_copy(p, d, kernels[i], r);
    double seconds = 0;
    if (!candidate() || !time_batch(d->stream.get(), candidate, 10, &seconds, r)) return false;
    if (i == 0 || seconds < best) best = seconds, pick = i;
  }
  *op = kernel_copy(p, d, kernels[pick], r);
  add_detail(r, "%s layout (the faster of two); ", names[pick]);
  return true;
}

bool device_copy(const Params* p, Result* r, bool memcpy) {
  DevicePair d;
  if (!setup_pair(p, &d, r)) return false;
  size_t bytes = d.words * 4;
  cudaStream_t s = d.stream.get();
  Op op = [&] {
    CK(cudaMemcpyAsync(d.dst.as<void>(), d.src.as<void>(), bytes, cudaMemcpyDeviceToDevice, s));
    return true;
  };
  if (!memcpy && !pick_layout(p, &d, &op, r)) return false;
  if (!time_trials(p, s, op, r)) return false;
  r->work = 2.0 * bytes;  // read + written
  add_detail(r, "%zu MiB, bytes read + written; ", bytes >> 20);
  return verify_words(d.dst.as<uint32_t>(), d.words, p->seed, s, r);
}

void fill_host(uint32_t* h, size_t words, uint64_t seed) {
  for (size_t i = 0; i < words; ++i) h[i] = fill_pattern(seed, i);
}

size_t host_mismatches(const uint32_t* h, size_t words, uint64_t seed) {
  size_t wrong = 0;
  for (size_t i = 0; i < words; ++i) wrong += h[i] != fill_pattern(seed, i);
  return wrong;
}

}  // namespace

bool run_copy_kernel(const Params* p, Result* r) { return device_copy(p, r, false); }
bool run_memcpy_d2d(const Params* p, Result* r) { return device_copy(p, r, true); }

bool run_h2d(const Params* p, Result* r) {
  size_t words = p->bytes / 4, bytes = words * 4;
  HostMemory host;
  DeviceMemory dev;
  Stream stream;
  if (!host.alloc(bytes, p->pinned, r) || !dev.alloc(bytes, r) || !stream.create(r)) return false;
  fill_host(host.as<uint32_t>(), words, p->seed);
  cudaStream_t s = stream.get();
  Op op = [&] {
    CK(cudaMemcpyAsync(dev.as<void>(), host.as<void>(), bytes, cudaMemcpyHostToDevice, s));
    return true;
  };
  if (!time_trials(p, s, op, r)) return false;
  r->work = static_cast<double>(bytes);
  add_detail(r, "%zu MiB %s; ", bytes >> 20, p->pinned ? "pinned" : "pageable");
  return verify_words(dev.as<uint32_t>(), words, p->seed, s, r);
}

bool run_d2h(const Params* p, Result* r) {
  size_t words = p->bytes / 4, bytes = words * 4;
  HostMemory host;
  DeviceMemory dev;
  Stream stream;
  if (!host.alloc(bytes, p->pinned, r) || !dev.alloc(bytes, r) || !stream.create(r)) return false;
  cudaStream_t s = stream.get();
  if (!fill_pattern_device(dev.as<uint32_t>(), words, p->seed, s, r)) return false;
  Op op = [&] {
    CK(cudaMemcpyAsync(host.as<void>(), dev.as<void>(), bytes, cudaMemcpyDeviceToHost, s));
    return true;
  };
  if (!time_trials(p, s, op, r)) return false;
  CK(cudaStreamSynchronize(s));
  r->work = static_cast<double>(bytes);
  add_detail(r, "%zu MiB %s; ", bytes >> 20, p->pinned ? "pinned" : "pageable");
  r->mismatches = host_mismatches(host.as<uint32_t>(), words, p->seed);
  if (r->mismatches) return fail(r, GPUENV_BENCH_WRONG, "%llu of %zu words arrived wrong", r->mismatches, words);
  add_detail(r, "copy verified");
  return true;
}

// ---- memtest ----

namespace {

__device__ __host__ inline unsigned long long memtest_word(int pass, size_t i, uint64_t seed) {
  switch (pass % 5) {
    case 0:
      return mix64(seed + pass * 0x100000001ull + i);
    case 1:
      return ~mix64(seed + pass * 0x100000001ull + i);
    case 2:
      return (i & 1) ? 0x5555555555555555ull : 0xaaaaaaaaaaaaaaaaull;
    case 3:
      return 1ull << ((i + pass) & 63);  // walking one
    default:
      return i;  // own address
  }
}

__global__ void memtest_write(unsigned long long* data, size_t n, int pass, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    data[i] = memtest_word(pass, i, seed);
}

__global__ void memtest_check(const unsigned long long* data, size_t n, int pass, uint64_t seed,
                              unsigned long long* wrong, unsigned long long* first) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    if (data[i] != memtest_word(pass, i, seed)) {
      ++mine;
      atomicMin(first, static_cast<unsigned long long>(i));
    }
  }
  if (mine) atomicAdd(wrong, mine);
}

// As much of `fraction` of free memory as cudaMalloc grants, backing off 5 % at a time.
bool alloc_most(double fraction, DeviceMemory* mem, size_t* bytes, Result* r) {
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  for (double f = fraction; f > 0.05; f -= 0.05) {
    *bytes = static_cast<size_t>(free_b * f) / (1 << 20) * (1 << 20);
    void* probe = nullptr;
    if (cudaMalloc(&probe, *bytes) == cudaSuccess) {
      cudaFree(probe);
      return mem->alloc(*bytes, r);
    }
    cudaGetLastError();
  }
  return fail(r, GPUENV_BENCH_ERROR, "cudaMalloc: could not allocate %.0f %% of %zu MiB free", fraction * 100,
              free_b >> 20);
}

struct MemtestCounters {
  DeviceMemory mem;
  unsigned long long wrong = 0, first = ~0ull;
};

bool memtest_pass(const Params* p, unsigned long long* data, size_t n, int pass, cudaStream_t s, MemtestCounters* c,
                  Result* r) {
  int grid = grid_for(p->device, 8);
  unsigned long long* dev = c->mem.as<unsigned long long>();
  unsigned long long init[2] = {0, ~0ull};
  CK(cudaMemcpyAsync(dev, init, sizeof init, cudaMemcpyHostToDevice, s));
  memtest_write<<<grid, 256, 0, s>>>(data, n, pass, p->seed);
  memtest_check<<<grid, 256, 0, s>>>(data, n, pass, p->seed, dev, dev + 1);
  CK(cudaGetLastError());
  unsigned long long got[2];
  CK(cudaMemcpyAsync(got, dev, sizeof got, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  c->wrong += got[0];
  if (got[0] && c->first == ~0ull) c->first = got[1] * 8;
  return true;
}

}  // namespace

bool run_memtest(const Params* p, Result* r) {
  DeviceMemory mem;
  MemtestCounters c;
  Stream stream;
  size_t bytes = 0;
  if (!stream.create(r) || !c.mem.alloc(2 * sizeof(unsigned long long), r)) return false;
  if (!alloc_most(p->fraction > 0 ? p->fraction : 0.9, &mem, &bytes, r)) return false;
  size_t n = bytes / 8;
  auto start = std::chrono::steady_clock::now();
  int pass = 0;
  double elapsed = 0;
  do {
    auto t0 = std::chrono::steady_clock::now();
    if (!memtest_pass(p, mem.as<unsigned long long>(), n, pass, stream.get(), &c, r)) return false;
    auto t1 = std::chrono::steady_clock::now();
    add_sample(r, std::chrono::duration<double>(t1 - t0).count());
    elapsed = std::chrono::duration<double>(t1 - start).count();
    ++pass;
  } while (elapsed < p->duration_s || pass < 5);
  r->work = 2.0 * bytes;
  r->mismatches = c.wrong;
  add_detail(r, "%d passes over %.1f GiB (random, inverted, checkerboard, walking one, address) in %.0f s", pass,
             bytes / double(1ull << 30), elapsed);
  if (c.wrong)
    return fail(r, GPUENV_BENCH_WRONG, "%llu words read back wrong; the first at byte offset 0x%llx", c.wrong, c.first);
  return true;
}

}  // namespace gpuenv_plugin
