/* The C interface between gpuenv and its CUDA plugin, libgpuenv-bench.so
 * (plugin/). gpuenv itself links no CUDA library: it dlopens the plugin
 * only for `gpuenv bench` and `gpuenv check` (sense/cuda/bench_plugin.cc).
 * Plain C structs, no C++ types across the boundary. Bump
 * GPUENV_BENCH_ABI_VERSION on any change to this file. */
#ifndef GPUENV_BENCH_PLUGIN_ABI_H_
#define GPUENV_BENCH_PLUGIN_ABI_H_

#include <stddef.h> /* offsetof */

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_BENCH_ABI_VERSION 1
#define GPUENV_BENCH_MAX_SAMPLES 64
#define GPUENV_BENCH_MAX_DEVICES 64

/* gpuenv_bench_result.status */
enum {
  GPUENV_BENCH_OK = 0,      /* ran, and the result was right */
  GPUENV_BENCH_SKIPPED = 1, /* does not apply here; message says why */
  GPUENV_BENCH_WRONG = 2,   /* ran, but the result was wrong: the case fails */
  GPUENV_BENCH_ERROR = 3    /* a CUDA, cuBLASLt or NCCL call failed; message names it */
};

/* One CUDA device, in CUDA ordinal order. */
typedef struct {
  char name[256];
  char uuid[64]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or "MIG-..." */
  int cc_major, cc_minor;
  int multiprocessors;
  unsigned long long memory_total;
} gpuenv_bench_device;

/* What to run. `op` names the operation:
 *   gemm          one cuBLASLt GEMM size and type (dtype, m, n, k)
 *   copy_kernel   device copy by a vectorised kernel (bytes)
 *   memcpy_d2d    device copy by cudaMemcpyAsync (bytes)
 *   h2d, d2h      host<->device copies; pinned: 1 page-locked, 0 pageable
 *   launch        empty-kernel launch: samples are seconds per launch;
 *                 pinned=1 asks for the round trip (launch + synchronize)
 *   p2p           device -> peer copy (peer access when the pair allows it)
 *   p2p_via_host  device -> pinned host -> peer, the path NCCL falls back to
 *   all_reduce    NCCL all-reduce of `bytes` over devices[0..ndevices)
 *   memtest       pattern test over `fraction` of free memory for duration_s
 *   sustained_gemm  GEMMs for duration_s, each result checked */
typedef struct {
  const char* op;
  const char* dtype; /* gemm: fp32|tf32|fp16|bf16|fp8 */
  int device, peer;
  int devices[GPUENV_BENCH_MAX_DEVICES];
  int ndevices;
  long long m, n, k;
  unsigned long long bytes;
  int pinned;
  int warmup;        /* untimed runs before the trials */
  int trials;        /* samples to return (<= GPUENV_BENCH_MAX_SAMPLES) */
  double min_trial_s;  /* each trial repeats the operation to last at least this */
  int algos;         /* cuBLASLt heuristics to try; the fastest is kept */
  double duration_s; /* memtest, sustained_gemm */
  double fraction;   /* memtest: share of free memory */
  unsigned long long seed;
} gpuenv_bench_params;

typedef struct {
  int status;
  char message[512];  /* why skipped, wrong or failed */
  char detail[256];   /* method: algorithm chosen, sizes, error measured */
  int nsamples;
  double samples[GPUENV_BENCH_MAX_SAMPLES]; /* seconds per operation, one per trial */
  double work;        /* per operation: FLOPs (gemm) or bytes (copies) */
  double error;       /* largest relative error found by verification; -1 when none */
  unsigned long long mismatches; /* wrong elements, words or results */
} gpuenv_bench_result;

typedef struct {
  int abi_version; /* GPUENV_BENCH_ABI_VERSION */
  const char* version; /* the plugin's gpuenv version */
  /* Fills up to `max` devices; returns the number, or -1 with `err` set. */
  int (*devices)(gpuenv_bench_device* out, int max, char* err, int errlen);
  /* Runs one operation; never exits, never throws. Returns result->status. */
  int (*run)(const gpuenv_bench_params* params, gpuenv_bench_result* result);
} gpuenv_bench_api;

/* The plugin's one exported symbol. */
/* The layout both sides of dlopen must agree on, on LP64 Linux (x86-64 and
 * aarch64): a change here is a change of GPUENV_BENCH_ABI_VERSION. */
#if defined(__LP64__)
#ifdef __cplusplus
#define GPUENV_BENCH_ABI_ASSERT(c, m) static_assert(c, m)
#else
#define GPUENV_BENCH_ABI_ASSERT(c, m) _Static_assert(c, m)
#endif
GPUENV_BENCH_ABI_ASSERT(sizeof(gpuenv_bench_device) == 344, "gpuenv_bench_device changed: bump the ABI version");
GPUENV_BENCH_ABI_ASSERT(offsetof(gpuenv_bench_device, memory_total) == 336, "gpuenv_bench_device changed");
GPUENV_BENCH_ABI_ASSERT(sizeof(gpuenv_bench_params) == 376, "gpuenv_bench_params changed: bump the ABI version");
GPUENV_BENCH_ABI_ASSERT(offsetof(gpuenv_bench_params, m) == 288, "gpuenv_bench_params changed");
GPUENV_BENCH_ABI_ASSERT(offsetof(gpuenv_bench_params, seed) == 368, "gpuenv_bench_params changed");
GPUENV_BENCH_ABI_ASSERT(sizeof(gpuenv_bench_result) == 1312, "gpuenv_bench_result changed: bump the ABI version");
GPUENV_BENCH_ABI_ASSERT(offsetof(gpuenv_bench_result, samples) == 776, "gpuenv_bench_result changed");
GPUENV_BENCH_ABI_ASSERT(sizeof(gpuenv_bench_api) == 32, "gpuenv_bench_api changed: bump the ABI version");
#undef GPUENV_BENCH_ABI_ASSERT
#endif

typedef const gpuenv_bench_api* (*gpuenv_bench_plugin_fn)(void);
#define GPUENV_BENCH_PLUGIN_SYMBOL "gpuenv_bench_plugin"

#ifdef __cplusplus
}
#endif

#endif /* GPUENV_BENCH_PLUGIN_ABI_H_ */
