/* A stand-in for libgpuenv-bench.so: the real dlopen path of gpuenv bench
 * and gpuenv check runs in CI against it, with no GPU.
 *   FAKE_BENCH_DEVICES  how many devices (default 1; the first is the H200 of
 *                       tests/fake_nvml/scenarios/h200.txt)
 *   FAKE_BENCH_WRONG    an operation whose result is wrong ("gemm", ...)
 *   FAKE_BENCH_ERROR    an operation that fails as a CUDA error would
 *   FAKE_BENCH_DEVICE_ERROR  set: listing the devices fails
 * Every operation takes 1 ms per unit of work reported below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/plugin_abi.h"

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static int same(const char* env, const char* op) {
  const char* v = getenv(env);
  return v && op && strcmp(v, op) == 0;
}

static int devices(gpuenv_bench_device* out, int max, char* err, int errlen) {
  int n = env_int("FAKE_BENCH_DEVICES", 1), i;
  if (getenv("FAKE_BENCH_DEVICE_ERROR")) {
    snprintf(err, (size_t)errlen, "cudaGetDeviceCount: no CUDA-capable device is detected");
    return -1;
  }
  for (i = 0; i < n && i < max; ++i) {
    memset(&out[i], 0, sizeof out[i]);
    snprintf(out[i].name, sizeof out[i].name, "NVIDIA H200");
    snprintf(out[i].uuid, sizeof out[i].uuid, "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d1%d", i);
    out[i].cc_major = 9;
    out[i].cc_minor = 0;
    out[i].multiprocessors = 132;
    out[i].memory_total = 150754820096ull;
  }
  return i;
}

static double work_of(const gpuenv_bench_params* p) {
  if (strcmp(p->op, "gemm") == 0 || strcmp(p->op, "sustained_gemm") == 0) return 2.0 * p->m * p->n * p->k;
  if (strcmp(p->op, "copy_kernel") == 0 || strcmp(p->op, "memcpy_d2d") == 0) return 2.0 * p->bytes;
  if (strcmp(p->op, "launch") == 0) return 1;
  return (double)p->bytes;
}

static int run(const gpuenv_bench_params* p, gpuenv_bench_result* r) {
  int i;
  memset(r, 0, sizeof *r);
  r->error = -1;
  if (same("FAKE_BENCH_ERROR", p->op)) {
    r->status = GPUENV_BENCH_ERROR;
    snprintf(r->message, sizeof r->message, "cudaMalloc: out of memory (fake)");
    return r->status;
  }
  r->nsamples = p->trials;
  for (i = 0; i < p->trials && i < GPUENV_BENCH_MAX_SAMPLES; ++i) r->samples[i] = 1e-3 * (1 + 0.01 * i);
  r->work = work_of(p);
  snprintf(r->detail, sizeof r->detail, "fake %s on device %d", p->op, p->device);
  if (same("FAKE_BENCH_WRONG", p->op)) {
    r->status = GPUENV_BENCH_WRONG;
    r->mismatches = 7;
    snprintf(r->message, sizeof r->message, "7 of 1024 entries are wrong (fake)");
  }
  return r->status;
}

static const gpuenv_bench_api kApi = {GPUENV_BENCH_ABI_VERSION, "fake", devices, run};

const gpuenv_bench_api* gpuenv_bench_plugin(void) { return &kApi; }
