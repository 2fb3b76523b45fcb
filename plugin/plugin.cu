// libgpuenv-bench.so: the measuring half of `gpuenv bench` and `gpuenv
// check`. One exported symbol returns the table of entry points
// (src/sense/cuda/bench_plugin_abi.h). cudart is linked statically; cuBLASLt and NCCL
// are loaded when a case first needs them.
#include <cstdio>
#include <cstring>
#include <exception>

#include "common.h"

namespace gpuenv_plugin {
namespace {

void format_uuid(const cudaUUID_t& u, char* out, size_t size) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

int devices(gpuenv_bench_device* out, int max, char* err, int errlen) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    std::snprintf(err, errlen, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return -1;
  }
  for (int i = 0; i < n && i < max; ++i) {
    cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, i)) != cudaSuccess) {
      std::snprintf(err, errlen, "cudaGetDeviceProperties(%d): %s", i, cudaGetErrorString(e));
      return -1;
    }
    gpuenv_bench_device& d = out[i];
    std::memset(&d, 0, sizeof d);
    std::snprintf(d.name, sizeof d.name, "%s", prop.name);
    format_uuid(prop.uuid, d.uuid, sizeof d.uuid);
    d.cc_major = prop.major, d.cc_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.memory_total = prop.totalGlobalMem;
  }
  return n < max ? n : max;
}

struct OpEntry {
  const char* name;
  bool (*fn)(const Params*, Result*);
};

const OpEntry kOps[] = {
    {"gemm", run_gemm},
    {"sustained_gemm", run_sustained_gemm},
    {"copy_kernel", run_copy_kernel},
    {"memcpy_d2d", run_memcpy_d2d},
    {"h2d", run_h2d},
    {"d2h", run_d2h},
    {"memtest", run_memtest},
    {"launch", run_launch},
    {"p2p", run_p2p},
    {"p2p_via_host", run_p2p_via_host},
    {"all_reduce", run_all_reduce},
};

int run(const gpuenv_bench_params* p, gpuenv_bench_result* r) {
  std::memset(r, 0, sizeof *r);
  r->error = -1;
  const OpEntry* op = nullptr;
  for (const auto& e : kOps)
    if (p->op && std::strcmp(p->op, e.name) == 0) op = &e;
  if (!op) return fail(r, GPUENV_BENCH_ERROR, "unknown operation %s", p->op ? p->op : "(none)"), r->status;
  try {
    if (cuda_ok(cudaSetDevice(p->device), "cudaSetDevice", r)) op->fn(p, r);
  } catch (const std::exception& e) {
    fail(r, GPUENV_BENCH_ERROR, "%s: %s", p->op, e.what());
  }
  return r->status;
}

const gpuenv_bench_api kApi = {GPUENV_BENCH_ABI_VERSION, GPUENV_VERSION, devices, run};

}  // namespace
}  // namespace gpuenv_plugin

extern "C" __attribute__((visibility("default"))) const gpuenv_bench_api* gpuenv_bench_plugin(void) {
  return &gpuenv_plugin::kApi;
}
