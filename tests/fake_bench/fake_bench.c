/* A stand-in for libgpuenv-bench.so: the real dlopen path of gpuenv bench
 * and gpuenv check runs in CI against it, with no GPU.
 *   FAKE_NVML_SCENARIO  the stand-in NVML's scenario: its GPUs (name, UUID,
 *                       cc, memory) are the devices, as CUDA would list them
 *   FAKE_BENCH_DEVICES  how many devices (default: the scenario's GPUs, or 1;
 *                       without a scenario each is the H200 of h200.txt)
 *   FAKE_BENCH_WRONG    an operation whose result is wrong ("gemm", ...)
 *   FAKE_BENCH_ERROR    an operation that fails as a CUDA error would
 *   FAKE_BENCH_DEVICE_ERROR  set: listing the devices fails
 * Every operation takes 1 ms per unit of work reported below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sense/cuda/bench_plugin_abi.h"

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static int same(const char* env, const char* op) {
  const char* v = getenv(env);
  return v && op && strcmp(v, op) == 0;
}

/* The value of `key` (key=value or key="value") on a scenario line, into out. */
static int field(const char* line, const char* key, char* out, size_t len) {
  const char* p = strstr(line, key);
  size_t n = 0;
  char end = ' ';
  if (!p) return 0;
  p += strlen(key);
  if (*p == '"') end = '"', ++p;
  while (p[n] && p[n] != end && p[n] != '\n' && n + 1 < len) ++n;
  memcpy(out, p, n);
  out[n] = 0;
  return 1;
}

/* The scenario's "gpu" lines as devices; how many were read. */
static int scenario_devices(gpuenv_bench_device* out, int max) {
  const char* path = getenv("FAKE_NVML_SCENARIO");
  FILE* f = path ? fopen(path, "r") : NULL;
  char line[2048], v[128];
  int n = 0;
  if (!f) return 0;
  while (n < max && fgets(line, sizeof line, f)) {
    if (strncmp(line, "gpu ", 4) != 0) continue;
    memset(&out[n], 0, sizeof out[n]);
    field(line, " name=", out[n].name, sizeof out[n].name);
    field(line, " uuid=", out[n].uuid, sizeof out[n].uuid);
    if (field(line, " cc=", v, sizeof v)) sscanf(v, "%d.%d", &out[n].cc_major, &out[n].cc_minor);
    if (field(line, " mem=", v, sizeof v)) out[n].memory_total = strtoull(v, NULL, 10);
    out[n].multiprocessors = field(line, " sms=", v, sizeof v) ? atoi(v) : 132;
    ++n;
  }
  fclose(f);
  return n;
}

static int devices(gpuenv_bench_device* out, int max, char* err, int errlen) {
  int listed = scenario_devices(out, max);
  int n = env_int("FAKE_BENCH_DEVICES", listed ? listed : 1), i;
  if (getenv("FAKE_BENCH_DEVICE_ERROR")) {
    snprintf(err, (size_t)errlen, "cudaGetDeviceCount: no CUDA-capable device is detected");
    return -1;
  }
  for (i = listed; i < n && i < max; ++i) {
    memset(&out[i], 0, sizeof out[i]);
    snprintf(out[i].name, sizeof out[i].name, "NVIDIA H200");
    snprintf(out[i].uuid, sizeof out[i].uuid, "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d1%d", i);
    out[i].cc_major = 9;
    out[i].cc_minor = 0;
    out[i].multiprocessors = 132;
    out[i].memory_total = 150754820096ull;
  }
  return n < max ? n : max;
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
