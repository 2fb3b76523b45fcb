// More than one GPU: device-to-device copies between a pair (peer access,
// or through pinned host memory as NCCL falls back to), and NCCL's
// all-reduce, with NCCL loaded at run time.
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.h"
#include "random.h"

namespace gpuenv_plugin {
namespace {

bool enable_peer(int from, int to, Result* r) {
  CK(cudaSetDevice(from));
  cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return true;
  }
  CK(e);
  return true;
}

bool verify_on(int device, const uint32_t* data, size_t words, uint64_t seed, Result* r, const char* what) {
  CK(cudaSetDevice(device));
  Stream s;
  unsigned long long wrong = 0;
  if (!s.create(r) || !count_pattern_mismatches(data, words, seed, s.get(), &wrong, r)) return false;
  r->mismatches = wrong;
  if (wrong) return fail(r, GPUENV_BENCH_WRONG, "%s delivered %llu wrong words of %zu", what, wrong, words);
  add_detail(r, "copy verified");
  return true;
}

}  // namespace

bool run_p2p(const Params* p, Result* r) {
  int can = 0;
  CK(cudaDeviceCanAccessPeer(&can, p->device, p->peer));
  if (!can)
    return fail(r, GPUENV_BENCH_SKIPPED, "CUDA reports no peer access from device %d to %d", p->device, p->peer);
  if (!enable_peer(p->device, p->peer, r) || !enable_peer(p->peer, p->device, r)) return false;
  size_t words = p->bytes / 4, bytes = words * 4;
  DeviceMemory src, dst;
  CK(cudaSetDevice(p->peer));
  if (!dst.alloc(bytes, r)) return false;
  CK(cudaSetDevice(p->device));
  Stream s;
  if (!s.create(r) || !src.alloc(bytes, r) || !fill_pattern_device(src.as<uint32_t>(), words, p->seed, s.get(), r))
    return false;
  Op op = [&] {
    CK(cudaMemcpyPeerAsync(dst.as<void>(), p->peer, src.as<void>(), p->device, bytes, s.get()));
    return true;
  };
  if (!time_trials(p, s.get(), op, r)) return false;
  r->work = static_cast<double>(bytes);
  add_detail(r, "%zu MiB one way, peer access; ", bytes >> 20);
  return verify_on(p->peer, dst.as<uint32_t>(), words, p->seed, r, "the peer copy");
}

namespace {

struct ViaHost {
  DeviceMemory src, dst;
  HostMemory host;
  Stream s_src, s_dst;
  size_t bytes = 0;
};

bool setup_via_host(const Params* p, ViaHost* v, Result* r) {
  size_t words = p->bytes / 4;
  v->bytes = words * 4;
  CK(cudaSetDevice(p->peer));
  if (!v->s_dst.create(r) || !v->dst.alloc(v->bytes, r)) return false;
  CK(cudaSetDevice(p->device));
  return v->s_src.create(r) && v->src.alloc(v->bytes, r) && v->host.alloc(v->bytes, true, r) &&
         fill_pattern_device(v->src.as<uint32_t>(), words, p->seed, v->s_src.get(), r);
}

// One trial: iters copies down from the source, then iters up to the peer.
// Pipelined in chunks, as NCCL does, the slower leg sets the pace.
bool via_host_trial(const Params* p, ViaHost* v, int iters, double* per_copy, Result* r) {
  double down = 0, up = 0;
  Op d2h = [&] {
    CK(cudaMemcpyAsync(v->host.as<void>(), v->src.as<void>(), v->bytes, cudaMemcpyDeviceToHost, v->s_src.get()));
    return true;
  };
  Op h2d = [&] {
    CK(cudaMemcpyAsync(v->dst.as<void>(), v->host.as<void>(), v->bytes, cudaMemcpyHostToDevice, v->s_dst.get()));
    return true;
  };
  CK(cudaSetDevice(p->device));
  if (!time_batch(v->s_src.get(), d2h, iters, &down, r)) return false;
  CK(cudaSetDevice(p->peer));
  if (!time_batch(v->s_dst.get(), h2d, iters, &up, r)) return false;
  *per_copy = std::max(down, up) / iters;
  return true;
}

}  // namespace

bool run_p2p_via_host(const Params* p, Result* r) {
  ViaHost v;
  if (!setup_via_host(p, &v, r)) return false;
  double one = 0;
  if (!via_host_trial(p, &v, 1, &one, r)) return false;
  int iters = std::clamp(static_cast<int>(std::ceil(p->min_trial_s / std::max(one, 1e-6))), 1, 1000);
  int trials = std::clamp(p->trials, 1, GPUENV_BENCH_MAX_SAMPLES);
  for (int t = 0; t < trials; ++t) {
    double s = 0;
    if (!via_host_trial(p, &v, iters, &s, r)) return false;
    add_sample(r, s);
  }
  r->work = static_cast<double>(v.bytes);
  add_detail(r, "%zu MiB, device to pinned host to peer, slower leg; ", v.bytes >> 20);
  return verify_on(p->peer, v.dst.as<uint32_t>(), v.bytes / 4, p->seed, r, "the copy through the host");
}

// ---- NCCL all-reduce ----

namespace {

struct Nccl {
  decltype(&ncclCommInitAll) init_all;
  decltype(&ncclCommDestroy) destroy;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclGetErrorString) error_string;
  decltype(&ncclGetVersion) version;
};

template <typename F>
bool nsym(void* h, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  return *fn != nullptr;
}

const Nccl* nccl(std::string* err) {
  static Nccl lib{};
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("GPUENV_NCCL_LIBRARY");
    const char* name = env && *env ? env : "libnccl.so.2";
    void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      error = std::string("cannot load NCCL (") + (e ? e : name) + "); install libnccl2 or set GPUENV_NCCL_LIBRARY";
      return;
    }
    if (!nsym(h, "ncclCommInitAll", &lib.init_all) || !nsym(h, "ncclCommDestroy", &lib.destroy) ||
        !nsym(h, "ncclAllReduce", &lib.all_reduce) || !nsym(h, "ncclGroupStart", &lib.group_start) ||
        !nsym(h, "ncclGroupEnd", &lib.group_end) || !nsym(h, "ncclGetErrorString", &lib.error_string) ||
        !nsym(h, "ncclGetVersion", &lib.version))
      error = std::string(name) + " lacks a function gpuenv needs (NCCL older than 2.0?)";
  });
  if (error.empty()) return &lib;
  *err = error;
  return nullptr;
}

#define NC(call)                                                                                        \
  do {                                                                                                  \
    ncclResult_t nc_ = (nc->call);                                                                      \
    if (nc_ != ncclSuccess) return fail(r, GPUENV_BENCH_ERROR, "%s: %s", #call, nc->error_string(nc_)); \
  } while (0)

__global__ void fill_value(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

__global__ void count_not_value(const float* p, size_t n, float v, unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    mine += p[i] != v;
  if (mine) atomicAdd(wrong, mine);
}

struct Rank {
  int device = 0;
  DeviceMemory send, recv, counter;
  Stream stream;
  Event start, stop;
  ncclComm_t comm = nullptr;
};

struct Ranks {
  const Nccl* nc = nullptr;
  std::vector<std::unique_ptr<Rank>> ranks;
  size_t count = 0;
  ~Ranks() {
    for (auto& k : ranks)
      if (k->comm) nc->destroy(k->comm);
  }
};

bool setup_ranks(const Params* p, Ranks* g, Result* r) {
  g->count = p->bytes / sizeof(float);
  for (int i = 0; i < p->ndevices; ++i) {
    auto k = std::make_unique<Rank>();
    k->device = p->devices[i];
    CK(cudaSetDevice(k->device));
    if (!k->stream.create(r) || !k->start.create(r) || !k->stop.create(r) || !k->send.alloc(p->bytes, r) ||
        !k->recv.alloc(p->bytes, r) || !k->counter.alloc(sizeof(unsigned long long), r))
      return false;
    fill_value<<<grid_for(k->device, 4), 256, 0, k->stream.get()>>>(k->send.as<float>(), g->count, float(i + 1));
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(k->stream.get()));
    g->ranks.push_back(std::move(k));
  }
  std::vector<ncclComm_t> comms(p->ndevices);
  const Nccl* nc = g->nc;
  NC(init_all(comms.data(), p->ndevices, p->devices));
  for (int i = 0; i < p->ndevices; ++i) g->ranks[i]->comm = comms[i];
  return true;
}

bool all_reduce_once(Ranks* g, Result* r) {
  const Nccl* nc = g->nc;
  NC(group_start());
  for (auto& k : g->ranks)
    NC(all_reduce(k->send.as<void>(), k->recv.as<void>(), g->count, ncclFloat, ncclSum, k->comm, k->stream.get()));
  NC(group_end());
  return true;
}

// Seconds for `iters` all-reduces: the slowest rank's events.
bool time_all_reduce(Ranks* g, int iters, double* seconds, Result* r) {
  for (auto& k : g->ranks) {
    CK(cudaSetDevice(k->device));
    CK(cudaEventRecord(k->start.get(), k->stream.get()));
  }
  for (int i = 0; i < iters; ++i)
    if (!all_reduce_once(g, r)) return false;
  *seconds = 0;
  for (auto& k : g->ranks) {
    CK(cudaSetDevice(k->device));
    CK(cudaEventRecord(k->stop.get(), k->stream.get()));
  }
  for (auto& k : g->ranks) {
    CK(cudaEventSynchronize(k->stop.get()));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, k->start.get(), k->stop.get()));
    *seconds = std::max(*seconds, ms / 1e3);
  }
  return true;
}

bool verify_sum(Ranks* g, Result* r) {
  float want = g->ranks.size() * (g->ranks.size() + 1) / 2.0f;
  for (auto& k : g->ranks) {
    CK(cudaSetDevice(k->device));
    unsigned long long wrong = 0;
    CK(cudaMemsetAsync(k->counter.as<void>(), 0, sizeof wrong, k->stream.get()));
    count_not_value<<<grid_for(k->device, 4), 256, 0, k->stream.get()>>>(k->recv.as<float>(), g->count, want,
                                                                         k->counter.as<unsigned long long>());
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(&wrong, k->counter.as<void>(), sizeof wrong, cudaMemcpyDeviceToHost, k->stream.get()));
    CK(cudaStreamSynchronize(k->stream.get()));
    r->mismatches += wrong;
  }
  if (r->mismatches)
    return fail(r, GPUENV_BENCH_WRONG, "%llu reduced elements differ from the expected sum %g", r->mismatches, want);
  add_detail(r, "sum verified on every rank");
  return true;
}

}  // namespace

bool run_all_reduce(const Params* p, Result* r) {
  if (p->ndevices < 2) return fail(r, GPUENV_BENCH_SKIPPED, "needs 2 or more GPUs");
  Ranks g;
  std::string err;
  if (!(g.nc = nccl(&err))) return fail(r, GPUENV_BENCH_ERROR, "%s", err.c_str());
  if (!setup_ranks(p, &g, r)) return false;
  for (int i = 0; i < std::max(p->warmup, 1); ++i)
    if (!all_reduce_once(&g, r)) return false;
  double one = 0;
  if (!time_all_reduce(&g, 1, &one, r)) return false;
  int iters = std::clamp(static_cast<int>(std::ceil(p->min_trial_s / std::max(one, 1e-6))), 1, 1000);
  for (int t = 0; t < std::clamp(p->trials, 1, GPUENV_BENCH_MAX_SAMPLES); ++t) {
    double s = 0;
    if (!time_all_reduce(&g, iters, &s, r)) return false;
    add_sample(r, s / iters);
  }
  int version = 0;
  g.nc->version(&version);
  r->work = static_cast<double>(g.count * sizeof(float));
  add_detail(r, "NCCL %d, %d ranks in one process, %zu MiB fp32 sum, busbw = algbw x 2(n-1)/n; ", version, p->ndevices,
             (g.count * sizeof(float)) >> 20);
  return verify_sum(&g, r);
}

}  // namespace gpuenv_plugin
