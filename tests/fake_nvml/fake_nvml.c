/* A stand-in libnvidia-ml.so.1 for tests: the NVML subset gpuenv uses,
 * answering from a scenario file (see scenario.h) named by the environment
 * variable FAKE_NVML_SCENARIO, read at nvmlInit time so one process can
 * switch scenarios. FAKE_NVML_TRACE names a file that receives the name of
 * every call, one a line. FAKE_NVML_PROCESSES names the process table (the
 * processes on the GPUs, read again whenever the file changes; scenario.h). Built twice: as is (a current driver, R580), and
 * with -DFAKE_NVML_OLD (an R418-era driver: only the unversioned names, and
 * no NUMA, MIG, row-remapping, clocks-event (only the older "throttle"
 * name) or fabric functions), so absent symbols are really absent.
 * Thread-safe as NVML is: gpuenv queries GPUs from several threads (the
 * scenario is read-only between inits; the trace and query counts are
 * locked). Signatures and struct layouts follow nvml.h; nothing here
 * includes it. */
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

typedef int nvmlReturn_t;
typedef struct fake_device* nvmlDevice_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
};

/* nvmlPciInfo_t as _v2/_v3 fill it. */
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

/* The struct the unversioned nvmlDeviceGetPciInfo filled (NVML before v2). */
typedef struct {
  char busId[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

/* C99 has no _Static_assert: a negative array size fails the build. */
typedef char fake_assert_pci[sizeof(nvmlPciInfo_t) == 68 ? 1 : -1];
typedef char fake_assert_pci_v1[sizeof(nvmlPciInfo_v1_t) == 52 ? 1 : -1];
typedef char fake_assert_memory[sizeof(nvmlMemory_t) == 24 ? 1 : -1];
typedef char fake_assert_memory_v2[sizeof(nvmlMemory_v2_t) == 40 ? 1 : -1];

/* nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo). */
typedef struct {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state; /* nvmlGpuFabricState_t */
} nvmlGpuFabricInfo_t;
typedef char fake_assert_fabric[sizeof(nvmlGpuFabricInfo_t) == 28 ? 1 : -1];

#define FAKE_MAX_GPUS 16
#define FAKE_MAX_MIGS 8
#define FAKE_MAX_LINKS 18

/* A device handle: a whole GPU (slot < 0) or one of its MIG devices. */
struct fake_device {
  int gpu;
  int slot;
};

static scn_scenario g_scn;
static int g_initialized;
static FILE* g_trace;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* g_trace, g_queries */
static int g_queries[FAKE_MAX_GPUS];
static struct fake_device g_gpus[FAKE_MAX_GPUS];
static struct fake_device g_migs[FAKE_MAX_GPUS][FAKE_MAX_MIGS];
enum { SEQ_UTIL, SEQ_SM, SEQ_RX, SEQ_TX, SEQ_NVLINK, SEQ_REPLAY, SEQ_ENERGY, SEQ_NVLINK_ERR, SEQ_COUNT };
static unsigned g_seq[FAKE_MAX_GPUS][SEQ_COUNT]; /* calls of a cycling key; under g_lock */
static char g_scenario_path[1024];               /* FAKE_NVML_SCENARIO at init */
static int g_xid_next[FAKE_MAX_GPUS];    /* the next of a GPU's `xid=` list to deliver; under g_lock */
static int g_xid_watched[FAKE_MAX_GPUS]; /* registered for Xid events; under g_lock */

static int gpu_count(void) {
  int n = scn_count(&g_scn, "gpu");
  return n < FAKE_MAX_GPUS ? n : FAKE_MAX_GPUS;
}

static const scn_record* gpu_record(int gpu) { return scn_nth(&g_scn, "gpu", gpu); }

static const scn_record* mig_record(int gpu, int slot) {
  int i;
  long long g, s;
  for (i = 0; i < g_scn.n; ++i) {
    const scn_record* r = &g_scn.rec[i];
    if (strcmp(r->kind, "mig") == 0 && scn_get_ll(r, "gpu", &g) && scn_get_ll(r, "slot", &s) &&
        g == gpu && s == slot)
      return r;
  }
  return NULL;
}

/* The record a handle's string/memory queries read: its gpu or mig line. */
static const scn_record* device_record(const struct fake_device* d) {
  return d->slot < 0 ? gpu_record(d->gpu) : mig_record(d->gpu, d->slot);
}

static int valid_device(const struct fake_device* d) {
  if (d == NULL || d->gpu < 0 || d->gpu >= gpu_count()) return 0;
  if (d->slot < 0) return d == &g_gpus[d->gpu];
  if (d->slot >= FAKE_MAX_MIGS) return 0;
  return d == &g_migs[d->gpu][d->slot] && mig_record(d->gpu, d->slot) != NULL;
}

/* One more query on a GPU (count = 1; a pair's query counts 0: gpuenv
 * queries pairs beside the GPUs, so their place in the count would vary):
 * GPU_IS_LOST once past a `fault lost=` budget. */
static nvmlReturn_t touch_by(int gpu, int count) {
  int i, queries;
  long long lost, after;
  pthread_mutex_lock(&g_lock);
  queries = g_queries[gpu] += count;
  pthread_mutex_unlock(&g_lock);
  for (i = 0; i < g_scn.n; ++i) {
    const scn_record* r = &g_scn.rec[i];
    if (strcmp(r->kind, "fault") != 0 || !scn_get_ll(r, "lost", &lost) || lost != gpu) continue;
    if (!scn_get_ll(r, "after", &after)) after = 2;
    if (queries > after) return NVML_ERROR_GPU_IS_LOST;
  }
  return NVML_SUCCESS;
}

static nvmlReturn_t touch(int gpu) { return touch_by(gpu, 1); }

/* The count of reads so far of a growing key (slot SEQ_*) of a GPU. */
static unsigned next_seq(int gpu, int slot) {
  unsigned n;
  pthread_mutex_lock(&g_lock);
  n = g_seq[gpu][slot]++;
  pthread_mutex_unlock(&g_lock);
  return n;
}

static void trace_call(const char* fn) {
  pthread_mutex_lock(&g_lock);
  scn_trace(g_trace, fn);
  pthread_mutex_unlock(&g_lock);
}

/* `fault fn=NAME delay_ms=N [gpu=I]`: the call takes N ms (as NVML's slow
 * calls do), to show that GPUs are queried concurrently. */
static void delay(const char* fn, int gpu) {
  int i;
  long long ms, g;
  for (i = 0; i < g_scn.n; ++i) {
    const scn_record* r = &g_scn.rec[i];
    const char* name = scn_get(r, "fn");
    if (strcmp(r->kind, "fault") == 0 && name != NULL && strcmp(name, fn) == 0 &&
        scn_get_ll(r, "delay_ms", &ms) && (!scn_get_ll(r, "gpu", &g) || g == gpu)) {
      struct timespec t;
      t.tv_sec = (time_t)(ms / 1000);
      t.tv_nsec = (long)(ms % 1000) * 1000000L;
      nanosleep(&t, NULL);
    }
  }
}

/* `fault fn=NAME meet=N`: a call of NAME waits until N calls of it are in
 * at once, and the first N then trace "meet NAME N": proof that GPUs are
 * queried concurrently that no timing can fake or a busy machine break. A
 * wait gives up after 20 s (a serial caller never gets N in), and then the
 * calls after it go on at once. */
static pthread_mutex_t g_meet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_meet_cond = PTHREAD_COND_INITIALIZER;
static int g_meet_in[SCN_MAX_RECORDS];    /* calls that came; under g_meet_lock */
static int g_meet_over[SCN_MAX_RECORDS];  /* 1 met, 2 given up; under g_meet_lock */

static void meet_at(int i, const char* fn, long long n) {
  struct timespec until;
  char line[160];
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 20;
  pthread_mutex_lock(&g_meet_lock);
  if (!g_meet_over[i] && ++g_meet_in[i] >= n) {
    g_meet_over[i] = 1;
    snprintf(line, sizeof line, "meet %s %lld", fn, n);
    trace_call(line);
    pthread_cond_broadcast(&g_meet_cond);
  }
  while (!g_meet_over[i] && pthread_cond_timedwait(&g_meet_cond, &g_meet_lock, &until) == 0) {
  }
  if (!g_meet_over[i]) g_meet_over[i] = 2, pthread_cond_broadcast(&g_meet_cond);
  pthread_mutex_unlock(&g_meet_lock);
}

static void meet(const char* fn) {
  int i;
  long long n;
  for (i = 0; i < g_scn.n; ++i) {
    const scn_record* r = &g_scn.rec[i];
    const char* name = scn_get(r, "fn");
    if (strcmp(r->kind, "fault") == 0 && name != NULL && strcmp(name, fn) == 0 && scn_get_ll(r, "meet", &n))
      meet_at(i, fn, n);
  }
}

/* What every entry point does first: trace, check init and the handle,
 * apply injected faults and delays, count the query. */
static nvmlReturn_t enter(const char* fn, const struct fake_device* d) {
  nvmlReturn_t rc;
  trace_call(fn);
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  delay(fn, d ? d->gpu : -1);
  meet(fn);
  if (d != NULL && !valid_device(d)) return NVML_ERROR_INVALID_ARGUMENT;
  rc = scn_fault(&g_scn, fn, d ? d->gpu : -1);
  if (rc != NVML_SUCCESS) return rc;
  return d ? touch(d->gpu) : NVML_SUCCESS;
}

static nvmlReturn_t enter_pair(const char* fn, const struct fake_device* a,
                               const struct fake_device* b) {
  nvmlReturn_t rc;
  trace_call(fn);
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  if (!valid_device(a) || !valid_device(b) || a->slot >= 0 || b->slot >= 0 || a == b)
    return NVML_ERROR_INVALID_ARGUMENT;
  delay(fn, a->gpu);
  meet(fn);
  rc = scn_fault(&g_scn, fn, a->gpu);
  if (rc == NVML_SUCCESS) rc = touch_by(a->gpu, 0);
  if (rc == NVML_SUCCESS) rc = touch_by(b->gpu, 0);
  return rc;
}

static nvmlReturn_t copy_string(const char* value, char* out, unsigned int len) {
  if (value == NULL) return NVML_ERROR_NOT_SUPPORTED;
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(value) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, value, strlen(value) + 1);
  return NVML_SUCCESS;
}

/* A whole-number key of a GPU's line into *out. */
static nvmlReturn_t gpu_uint(const char* fn, nvmlDevice_t d, const char* key, unsigned int* out) {
  long long v;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_ll(gpu_record(d->gpu), key, &v)) return NVML_ERROR_NOT_SUPPORTED;
  *out = (unsigned int)v;
  return NVML_SUCCESS;
}

/* Half of an "a/b" key of a GPU's line (which = 0: a, 1: b). */
static nvmlReturn_t gpu_half(const char* fn, nvmlDevice_t d, const char* key, int which,
                             unsigned int* out) {
  long long a, b;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_pair(gpu_record(d->gpu), key, &a, &b))
    return NVML_ERROR_NOT_SUPPORTED;
  *out = (unsigned int)(which ? b : a);
  return NVML_SUCCESS;
}

/* ---- Init and system ---- */

static void close_trace(void) {
  if (g_trace != NULL) fclose(g_trace);
  g_trace = NULL;
}

static nvmlReturn_t init(const char* fn) {
  char err[256];
  const char* path = getenv("FAKE_NVML_SCENARIO");
  const char* trace = getenv("FAKE_NVML_TRACE");
  int fault, i;
  close_trace();
  if (trace != NULL) g_trace = fopen(trace, "a");
  scn_trace(g_trace, fn);
  memset(g_queries, 0, sizeof(g_queries));
  memset(g_seq, 0, sizeof(g_seq));
  snprintf(g_scenario_path, sizeof(g_scenario_path), "%s", path ? path : "");
  memset(g_xid_next, 0, sizeof(g_xid_next));
  memset(g_xid_watched, 0, sizeof(g_xid_watched));
  for (i = 0; i < FAKE_MAX_GPUS; ++i) {
    g_gpus[i].gpu = i;
    g_gpus[i].slot = -1;
  }
  if (path == NULL || scn_load(&g_scn, path, err, sizeof(err)) != 0) {
    fprintf(stderr, "fake_nvml: %s\n", path ? err : "FAKE_NVML_SCENARIO is not set");
    close_trace();
    return NVML_ERROR_UNKNOWN;
  }
  fault = scn_fault_value(&g_scn, "init");
  if (fault == 0) fault = scn_fault(&g_scn, fn, -1);
  if (fault != 0) close_trace();
  g_initialized = (fault == 0);
  return fault;
}

nvmlReturn_t nvmlInit(void) { return init("nvmlInit"); }

nvmlReturn_t nvmlShutdown(void) {
  trace_call("nvmlShutdown");
  close_trace();
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  g_initialized = 0;
  return NVML_SUCCESS;
}

/* Closes the trace if the library is unloaded without nvmlShutdown. */
__attribute__((destructor)) static void unload(void) { close_trace(); }

const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case 9:
      return "Driver Not Loaded";
    case 11:
      return "Interrupt Request Issue";
    case 15:
      return "GPU is lost";
    case 16:
      return "GPU requires restart";
    case 18:
      return "Driver/library version mismatch";
    case 25:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  nvmlReturn_t rc = enter("nvmlSystemGetDriverVersion", NULL);
  if (rc != NVML_SUCCESS) return rc;
  return copy_string(scn_get(scn_nth(&g_scn, "system", 0), "driver"), version, length);
}

static nvmlReturn_t cuda_driver_version(const char* fn, int* version) {
  long long v;
  nvmlReturn_t rc = enter(fn, NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_ll(scn_nth(&g_scn, "system", 0), "cuda", &v)) return NVML_ERROR_NOT_SUPPORTED;
  *version = (int)v;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion", version);
}

static nvmlReturn_t device_count(const char* fn, unsigned int* count) {
  nvmlReturn_t rc = enter(fn, NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned int)gpu_count();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return device_count("nvmlDeviceGetCount", count);
}

static nvmlReturn_t handle_by_index(const char* fn, unsigned int index, nvmlDevice_t* device) {
  nvmlReturn_t rc = enter(fn, NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (device == NULL || index >= (unsigned int)gpu_count()) return NVML_ERROR_INVALID_ARGUMENT;
  rc = scn_fault(&g_scn, fn, (int)index);
  if (rc == NVML_SUCCESS) rc = touch((int)index);
  if (rc == NVML_SUCCESS) *device = &g_gpus[index];
  return rc;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex", index, device);
}

/* ---- Identity ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  nvmlReturn_t rc = enter("nvmlDeviceGetName", d);
  if (rc != NVML_SUCCESS) return rc;
  return copy_string(scn_get(device_record(d), "name"), name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  nvmlReturn_t rc = enter("nvmlDeviceGetUUID", d);
  if (rc != NVML_SUCCESS) return rc;
  return copy_string(scn_get(device_record(d), "uuid"), uuid, length);
}

/* "00000000:3B:00.0" from the gpu line's pci key into numbers. */
static nvmlReturn_t pci_address(nvmlDevice_t d, unsigned int* dom, unsigned int* bus,
                                unsigned int* dev) {
  const char* pci = scn_get(gpu_record(d->gpu), "pci");
  if (d->slot >= 0 || pci == NULL) return NVML_ERROR_NOT_SUPPORTED;
  if (sscanf(pci, "%x:%x:%x.", dom, bus, dev) != 3) return NVML_ERROR_UNKNOWN;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_v1_t* pci) {
  nvmlReturn_t rc = enter("nvmlDeviceGetPciInfo", d);
  if (rc != NVML_SUCCESS) return rc;
  if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof(*pci));
  rc = pci_address(d, &pci->domain, &pci->bus, &pci->device);
  if (rc != NVML_SUCCESS) return rc;
  snprintf(pci->busId, sizeof(pci->busId), "%04X:%02X:%02X.0", pci->domain & 0xffffu,
           pci->bus & 0xffu, pci->device & 0xffu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  const char* cc;
  nvmlReturn_t rc = enter("nvmlDeviceGetCudaComputeCapability", d);
  if (rc != NVML_SUCCESS) return rc;
  if (major == NULL || minor == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  cc = scn_get(gpu_record(d->gpu), "cc");
  if (d->slot >= 0 || cc == NULL) return NVML_ERROR_NOT_SUPPORTED;
  return sscanf(cc, "%d.%d", major, minor) == 2 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

/* ---- Memory ---- */

/* total, reserved and free of a gpu or mig line (used is what is left). */
static nvmlReturn_t memory(nvmlDevice_t d, long long* total, long long* reserved, long long* free) {
  const scn_record* r = device_record(d);
  if (!scn_get_ll(r, "mem", total)) return NVML_ERROR_NOT_SUPPORTED;
  if (!scn_get_ll(r, "reserved", reserved)) *reserved = 0;
  if (!scn_get_ll(r, "free", free)) *free = *total - *reserved;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  long long total, reserved, free;
  nvmlReturn_t rc = enter("nvmlDeviceGetMemoryInfo", d);
  if (rc == NVML_SUCCESS && m == NULL) rc = NVML_ERROR_INVALID_ARGUMENT;
  if (rc == NVML_SUCCESS) rc = memory(d, &total, &reserved, &free);
  if (rc != NVML_SUCCESS) return rc;
  m->total = (unsigned long long)total;
  m->free = (unsigned long long)free;
  m->used = (unsigned long long)(total - free); /* v1 counts the reserved part as used */
  return NVML_SUCCESS;
}

/* ---- Modes, links, clocks, power ---- */

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* mode) {
  return gpu_uint("nvmlDeviceGetPersistenceMode", d, "persistence", (unsigned int*)mode);
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) {
  return gpu_uint("nvmlDeviceGetComputeMode", d, "compute_mode", (unsigned int*)mode);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  return gpu_half("nvmlDeviceGetCurrPcieLinkGeneration", d, "pcie_gen", 0, gen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  return gpu_half("nvmlDeviceGetMaxPcieLinkGeneration", d, "pcie_gen", 1, gen);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  return gpu_half("nvmlDeviceGetCurrPcieLinkWidth", d, "pcie_width", 0, width);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  return gpu_half("nvmlDeviceGetMaxPcieLinkWidth", d, "pcie_width", 1, width);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int* limit) {
  return gpu_uint("nvmlDeviceGetPowerManagementLimit", d, "power", limit);
}

/* nvmlClockType_t: 0 graphics, 1 SM, 2 memory, 3 video. */
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int* clock) {
  if (type == 1) return gpu_uint("nvmlDeviceGetMaxClockInfo", d, "sm_clock", clock);
  if (type == 2) return gpu_uint("nvmlDeviceGetMaxClockInfo", d, "mem_clock", clock);
  if (type == 0 || type == 3) return gpu_uint("nvmlDeviceGetMaxClockInfo", d, "-", clock);
  return NVML_ERROR_INVALID_ARGUMENT;
}

/* nvlinks=active/total: links below active are up, the rest of total down,
 * links past total not supported. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int* active) {
  long long up, total;
  nvmlReturn_t rc = enter("nvmlDeviceGetNvLinkState", d);
  if (rc != NVML_SUCCESS) return rc;
  if (active == NULL || link >= FAKE_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_pair(gpu_record(d->gpu), "nvlinks", &up, &total))
    return NVML_ERROR_NOT_SUPPORTED;
  if ((long long)link >= total) return NVML_ERROR_NOT_SUPPORTED;
  *active = (long long)link < up;
  return NVML_SUCCESS;
}

/* ---- Locality ---- */

/* Sets the bits of "0-31,64-95" in set (words of 64 bits). */
static void set_cpus(const char* list, unsigned int words, unsigned long* set) {
  const char* p = list;
  while (*p) {
    char* end;
    long lo = strtol(p, &end, 10), hi = lo, c;
    if (*end == '-') hi = strtol(end + 1, &end, 10);
    for (c = lo; c <= hi; ++c)
      if (c >= 0 && (unsigned long)c / 64 < words) set[c / 64] |= 1ul << (c % 64);
    p = (*end == ',') ? end + 1 : end;
    if (end == p && *p != '\0') break; /* malformed: stop */
  }
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int words, unsigned long* set) {
  const char* cpus;
  nvmlReturn_t rc = enter("nvmlDeviceGetCpuAffinity", d);
  if (rc != NVML_SUCCESS) return rc;
  if (set == NULL || words == 0) return NVML_ERROR_INVALID_ARGUMENT;
  cpus = scn_get(gpu_record(d->gpu), "cpus");
  if (d->slot >= 0 || cpus == NULL) return NVML_ERROR_NOT_SUPPORTED;
  memset(set, 0, words * sizeof(*set));
  set_cpus(cpus, words, set);
  return NVML_SUCCESS;
}

/* ---- Pairs ---- */

/* The pair line for a and b (either order), else the `pairs` default. */
static const scn_record* pair_record(int a, int b) {
  int i;
  long long x, y;
  for (i = 0; i < g_scn.n; ++i) {
    const scn_record* r = &g_scn.rec[i];
    if (strcmp(r->kind, "pair") != 0 || !scn_get_ll(r, "a", &x) || !scn_get_ll(r, "b", &y))
      continue;
    if ((x == a && y == b) || (x == b && y == a)) return r;
  }
  return scn_nth(&g_scn, "pairs", 0);
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int* level) {
  long long v;
  nvmlReturn_t rc = enter_pair("nvmlDeviceGetTopologyCommonAncestor", a, b);
  if (rc != NVML_SUCCESS) return rc;
  if (level == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_ll(pair_record(a->gpu, b->gpu), "topo", &v)) return NVML_ERROR_NOT_SUPPORTED;
  *level = (int)v;
  return NVML_SUCCESS;
}

/* nvmlGpuP2PCapsIndex_t: 0 read, 1 write, 2 NVLink, 3 atomics, 4 prop. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int caps, int* status) {
  long long v;
  nvmlReturn_t rc = enter_pair("nvmlDeviceGetP2PStatus", a, b);
  if (rc != NVML_SUCCESS) return rc;
  if (status == NULL || caps < 0 || caps > 4) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_ll(pair_record(a->gpu, b->gpu), caps == 2 ? "nvlink" : "p2p", &v))
    return NVML_ERROR_NOT_SUPPORTED;
  *status = (int)v;
  return NVML_SUCCESS;
}

/* ---- Health (doctor) ----
 * gpu keys: events=0x44 (clocks event reasons), temp=C, ecc=current/pending
 * (1 on), ecc_uncorrected=N (volatile), retired_pending=0|1,
 * remap=pending/failure (with remap_rows=corrected/uncorrected),
 * fabric=state (0-3) with fabric_status=N. */

static nvmlReturn_t clocks_event_reasons(const char* fn, nvmlDevice_t d,
                                         unsigned long long* reasons) {
  long long v;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (reasons == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_ll(gpu_record(d->gpu), "events", &v)) return NVML_ERROR_NOT_SUPPORTED;
  *reasons = (unsigned long long)v;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                       unsigned long long* reasons) {
  return clocks_event_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", d, reasons);
}

/* nvmlTemperatureSensors_t: only NVML_TEMPERATURE_GPU (0). */
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* celsius) {
  if (sensor != 0) {
    trace_call("nvmlDeviceGetTemperature");
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return gpu_uint("nvmlDeviceGetTemperature", d, "temp", celsius);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) {
  nvmlReturn_t rc;
  if (pending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  rc = gpu_half("nvmlDeviceGetEccMode", d, "ecc", 0, (unsigned int*)current);
  if (rc == NVML_SUCCESS) {
    long long a, b;
    scn_get_pair(gpu_record(d->gpu), "ecc", &a, &b);
    *pending = (int)b;
  }
  return rc;
}

/* The volatile (nvmlEccCounterType_t 0) uncorrected and corrected counts
 * (nvmlMemoryErrorType_t 1 and 0) come from the scenario; others are 0. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long* count) {
  long long on, pending, v;
  nvmlReturn_t rc = enter("nvmlDeviceGetTotalEccErrors", d);
  if (rc != NVML_SUCCESS) return rc;
  if (count == NULL || type < 0 || type > 1 || counter < 0 || counter > 1)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_pair(gpu_record(d->gpu), "ecc", &on, &pending) || on != 1)
    return NVML_ERROR_NOT_SUPPORTED;
  if (type == 1 && counter == 0 && scn_get_ll(gpu_record(d->gpu), "ecc_uncorrected", &v))
    *count = (unsigned long long)v;
  else if (type == 0 && counter == 0 && scn_get_ll(gpu_record(d->gpu), "ecc_corrected", &v))
    *count = (unsigned long long)v;
  else
    *count = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  return gpu_uint("nvmlDeviceGetRetiredPagesPendingStatus", d, "retired_pending",
                  (unsigned int*)pending);
}

/* ---- Sampled by `gpuenv export` ----
 * gpu keys: util=gpu/memory (percent), clocks=sm/memory (current MHz),
 * power_draw=mW, energy=mJ (or energy=START/STEP: STEP more each read),
 * pcie_replay=N, ecc_corrected=N (volatile). */

typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* millijoules) {
  long long v, step;
  nvmlReturn_t rc = enter("nvmlDeviceGetTotalEnergyConsumption", d);
  if (rc != NVML_SUCCESS) return rc;
  if (millijoules == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0) return NVML_ERROR_NOT_SUPPORTED;
  if (scn_get_pair(gpu_record(d->gpu), "energy", &v, &step))
    v += step * (long long)next_seq(d->gpu, SEQ_ENERGY);
  else if (!scn_get_ll(gpu_record(d->gpu), "energy", &v))
    return NVML_ERROR_NOT_SUPPORTED;
  *millijoules = (unsigned long long)v;
  return NVML_SUCCESS;
}

/* pcie_replay=N, or pcie_replay=N/STEP: STEP more replays each read (a link
 * that keeps retrying, for the PCIe replay-rate alert). */
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int* count) {
  long long base, step;
  unsigned n;
  nvmlReturn_t rc;
  const char* raw = d->slot >= 0 ? NULL : scn_get(gpu_record(d->gpu), "pcie_replay");
  if (raw == NULL || strchr(raw, '/') == NULL)
    return gpu_uint("nvmlDeviceGetPcieReplayCounter", d, "pcie_replay", count);
  rc = enter("nvmlDeviceGetPcieReplayCounter", d);
  if (rc != NVML_SUCCESS) return rc;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_pair(gpu_record(d->gpu), "pcie_replay", &base, &step)) return NVML_ERROR_NOT_SUPPORTED;
  n = next_seq(d->gpu, SEQ_REPLAY);
  *count = (unsigned int)(base + step * (long long)n);
  return NVML_SUCCESS;
}

/* ---- What only a current driver exports ---- */
#ifndef FAKE_NVML_OLD

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
  return clocks_event_reasons("nvmlDeviceGetCurrentClocksEventReasons", d, reasons);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corrected,
                                       unsigned int* uncorrected, unsigned int* pending,
                                       unsigned int* failure) {
  long long c = 0, u = 0;
  nvmlReturn_t rc;
  if (corrected == NULL || uncorrected == NULL || failure == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  rc = gpu_half("nvmlDeviceGetRemappedRows", d, "remap", 0, pending);
  if (rc != NVML_SUCCESS) return rc;
  scn_get_pair(gpu_record(d->gpu), "remap", &c, &u);
  *failure = (unsigned int)u;
  c = u = 0;
  scn_get_pair(gpu_record(d->gpu), "remap_rows", &c, &u);
  *corrected = (unsigned int)c;
  *uncorrected = (unsigned int)u;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* info) {
  long long state, status = 0;
  nvmlReturn_t rc = enter("nvmlDeviceGetGpuFabricInfo", d);
  if (rc != NVML_SUCCESS) return rc;
  if (info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0 || !scn_get_ll(gpu_record(d->gpu), "fabric", &state))
    return NVML_ERROR_NOT_SUPPORTED;
  memset(info, 0, sizeof(*info));
  scn_get_ll(gpu_record(d->gpu), "fabric_status", &status);
  info->status = (nvmlReturn_t)status;
  info->cliqueId = 1;
  info->state = (unsigned char)state;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return init("nvmlInit_v2"); }

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion_v2", version);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return device_count("nvmlDeviceGetCount_v2", count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device);
}

static nvmlReturn_t pci_info(const char* fn, nvmlDevice_t d, nvmlPciInfo_t* pci) {
  long long id = 0;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof(*pci));
  rc = pci_address(d, &pci->domain, &pci->bus, &pci->device);
  if (rc != NVML_SUCCESS) return rc;
  scn_get_ll(gpu_record(d->gpu), "devid", &id);
  pci->pciDeviceId = (unsigned int)id;
  snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
  snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", pci->domain & 0xffffu,
           pci->bus & 0xffu, pci->device & 0xffu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info("nvmlDeviceGetPciInfo_v2", d, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info("nvmlDeviceGetPciInfo_v3", d, pci);
}

/* Rejects a version word other than NVML_STRUCT_VERSION(Memory, 2), as
 * NVML does: the check that catches `version = 2`. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  long long total, reserved, free;
  nvmlReturn_t rc = enter("nvmlDeviceGetMemoryInfo_v2", d);
  if (rc == NVML_SUCCESS && m == NULL) rc = NVML_ERROR_INVALID_ARGUMENT;
  if (rc == NVML_SUCCESS && m->version != NVML_MEMORY_V2_VERSION)
    rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (rc == NVML_SUCCESS) rc = memory(d, &total, &reserved, &free);
  if (rc != NVML_SUCCESS) return rc;
  m->total = (unsigned long long)total;
  m->reserved = (unsigned long long)reserved;
  m->free = (unsigned long long)free;
  m->used = (unsigned long long)(total - reserved - free);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int* node) {
  return gpu_uint("nvmlDeviceGetNumaNodeId", d, "numa", node);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  nvmlReturn_t rc = gpu_uint("nvmlDeviceGetMigMode", d, "mig", current);
  if (rc == NVML_SUCCESS && pending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (rc == NVML_SUCCESS) *pending = *current;
  return rc;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  return gpu_uint("nvmlDeviceGetMaxMigDeviceCount", d, "migmax", count);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                 nvmlDevice_t* mig) {
  long long on = 0;
  nvmlReturn_t rc = enter("nvmlDeviceGetMigDeviceHandleByIndex", d);
  if (rc != NVML_SUCCESS) return rc;
  if (mig == NULL || d->slot >= 0 || index >= FAKE_MAX_MIGS) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_ll(gpu_record(d->gpu), "mig", &on) || on != 1) return NVML_ERROR_INVALID_ARGUMENT;
  if (mig_record(d->gpu, (int)index) == NULL) return NVML_ERROR_NOT_FOUND;
  g_migs[d->gpu][index].gpu = d->gpu;
  g_migs[d->gpu][index].slot = (int)index;
  *mig = &g_migs[d->gpu][index];
  return NVML_SUCCESS;
}

static nvmlReturn_t mig_uint(const char* fn, nvmlDevice_t d, const char* key, unsigned int* out) {
  long long v;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (out == NULL || d->slot < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!scn_get_ll(device_record(d), key, &v)) return NVML_ERROR_NOT_SUPPORTED;
  *out = (unsigned int)v;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  return mig_uint("nvmlDeviceGetGpuInstanceId", d, "gi", id);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  return mig_uint("nvmlDeviceGetComputeInstanceId", d, "ci", id);
}

/* nvmlDeviceAttributes_t as nvmlDeviceGetAttributes_v2 fills it. */
typedef struct {
  unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount;
  unsigned int sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* A mig line's attrs=SMS/CE/DEC/ENC/JPG/OFA/GIS/CIS/MIB; not supported
 * without the key, or for a GPU (NVML answers only for MIG devices there). */
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t* a) {
  unsigned int v[8];
  unsigned long long mib;
  const char* text;
  nvmlReturn_t rc = enter("nvmlDeviceGetAttributes_v2", d);
  if (rc != NVML_SUCCESS) return rc;
  if (a == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  text = d->slot < 0 ? NULL : scn_get(device_record(d), "attrs");
  if (text == NULL || sscanf(text, "%u/%u/%u/%u/%u/%u/%u/%u/%llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                             &v[6], &v[7], &mib) != 9)
    return NVML_ERROR_NOT_SUPPORTED;
  a->multiprocessorCount = v[0];
  a->sharedCopyEngineCount = v[1];
  a->sharedDecoderCount = v[2];
  a->sharedEncoderCount = v[3];
  a->sharedJpegCount = v[4];
  a->sharedOfaCount = v[5];
  a->gpuInstanceSliceCount = v[6];
  a->computeInstanceSliceCount = v[7];
  a->memorySizeMB = mib;
  return NVML_SUCCESS;
}

#endif /* FAKE_NVML_OLD */

/* ---- What `gpuenv run` samples while a job runs (sense/nvml/job_watch.cc) ----
 * gpu keys: util=N or util=a,b,c (one value per call, cycling), power_now=mW,
 * sm_now=MHz (or a cycling list), pcie_rx=KB/s, pcie_tx=KB/s (lists too), and
 * job_mem=BYTES: every child of the calling process (the job `gpuenv run`
 * started) is listed as a compute process of the GPU using that much memory,
 * after the process table's (below); on a mig line, of that MIG device (and
 * of its GPU, as NVML lists a GPU in MIG mode). */

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef char fake_assert_util[sizeof(nvmlUtilization_t) == 8 ? 1 : -1];
typedef char fake_assert_process[sizeof(nvmlProcessInfo_t) == 24 ? 1 : -1];


/* The next value of a "a,b,c" key of a GPU's line, cycling per call. */
static nvmlReturn_t gpu_seq(const char* fn, nvmlDevice_t d, const char* key, int slot, unsigned int* out) {
  char list[SCN_VALUE_LEN];
  const char* v;
  char *tok, *save = NULL;
  unsigned n = 0, want, i = 0;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  v = d->slot >= 0 ? NULL : scn_get(gpu_record(d->gpu), key);
  if (v == NULL || *v == '\0') return NVML_ERROR_NOT_SUPPORTED;
  for (tok = (char*)v; *tok; ++tok) n += *tok == ',';
  pthread_mutex_lock(&g_lock);
  want = g_seq[d->gpu][slot]++ % (n + 1);
  pthread_mutex_unlock(&g_lock);
  snprintf(list, sizeof(list), "%s", v);
  for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save), ++i)
    if (i == want) {
      *out = (unsigned int)strtoul(tok, NULL, 0);
      return NVML_SUCCESS;
    }
  return NVML_ERROR_UNKNOWN;
}

/* util=G/M (GPU and memory percent; `gpuenv export`'s scenarios) or
 * util=a,b,c (both the same, cycling per call; `gpuenv run`'s). */
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  long long g, m;
  unsigned int v = 0;
  nvmlReturn_t rc;
  const char* raw;
  if (u == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  raw = d->slot >= 0 ? NULL : scn_get(gpu_record(d->gpu), "util");
  if (raw != NULL && strchr(raw, '/') != NULL) {
    rc = enter("nvmlDeviceGetUtilizationRates", d);
    if (rc != NVML_SUCCESS) return rc;
    if (!scn_get_pair(gpu_record(d->gpu), "util", &g, &m)) return NVML_ERROR_NOT_SUPPORTED;
    u->gpu = (unsigned int)g;
    u->memory = (unsigned int)m;
    return NVML_SUCCESS;
  }
  rc = gpu_seq("nvmlDeviceGetUtilizationRates", d, "util", SEQ_UTIL, &v);
  if (rc == NVML_SUCCESS) u->gpu = u->memory = v;
  return rc;
}

/* power_draw=mW, or power_now=mW (a cycling list). */
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  if (d->slot < 0 && scn_get(gpu_record(d->gpu), "power_now") != NULL)
    return gpu_uint("nvmlDeviceGetPowerUsage", d, "power_now", mw);
  return gpu_uint("nvmlDeviceGetPowerUsage", d, "power_draw", mw);
}

/* nvmlClockType_t: 1 SM (sm_now=MHz or a cycling list, else clocks=SM,MEM),
 * 2 memory (clocks=SM,MEM); graphics and video are not in the scenarios. */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  if (type == 1 && d->slot < 0 && scn_get(gpu_record(d->gpu), "sm_now") != NULL)
    return gpu_seq("nvmlDeviceGetClockInfo", d, "sm_now", SEQ_SM, mhz);
  if (type == 1) return gpu_half("nvmlDeviceGetClockInfo", d, "clocks", 0, mhz);
  if (type == 2) return gpu_half("nvmlDeviceGetClockInfo", d, "clocks", 1, mhz);
  if (type == 0 || type == 3) return gpu_uint("nvmlDeviceGetClockInfo", d, "-", mhz);
  return NVML_ERROR_INVALID_ARGUMENT;
}

/* nvmlPcieUtilCounter_t: 0 TX, 1 RX. */
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int* kbs) {
  if (counter != 0 && counter != 1) {
    trace_call("nvmlDeviceGetPcieThroughput");
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return gpu_seq("nvmlDeviceGetPcieThroughput", d, counter ? "pcie_rx" : "pcie_tx", counter ? SEQ_RX : SEQ_TX, kbs);
}

#ifndef FAKE_NVML_OLD
/* The children of this process, from its main thread's children file. */
static unsigned child_pids(unsigned int* pids, unsigned cap) {
  char path[64], buf[4096];
  unsigned n = 0;
  size_t len;
  char *tok, *save = NULL;
  FILE* f;
  snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
  f = fopen(path, "r");
  if (f == NULL) return 0;
  len = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[len] = '\0';
  for (tok = strtok_r(buf, " \n", &save); tok != NULL && n < cap; tok = strtok_r(NULL, " \n", &save))
    pids[n++] = (unsigned int)strtoul(tok, NULL, 10);
  return n;
}

/* ---- The process table (scenario.h): FAKE_NVML_PROCESSES, else the
 * system line's processes=PATH (relative to the scenario's directory),
 * read again at a call that lists processes or their utilisation whenever
 * the file changed, so a test can change it while the exporter runs. A GPU's lists hold its lines
 * without mig=, a MIG device's the lines with its slot. ---- */

#define FAKE_MAX_PROCESSES 256
#define FAKE_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull /* NVML_VALUE_NOT_AVAILABLE */
enum { LIST_ANY = -1, LIST_COMPUTE = 0, LIST_GRAPHICS = 1 };

typedef struct {
  unsigned int pid;
  unsigned long long mem; /* FAKE_VALUE_NOT_AVAILABLE: mem=- or none */
  long long sm;           /* smUtil percent; -1: no sm= */
  int list;               /* LIST_COMPUTE, or LIST_GRAPHICS for type=graphics */
} fake_process;

/* nvmlProcessUtilizationSample_t */
typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
typedef char fake_assert_sample[sizeof(nvmlProcessUtilizationSample_t) == 32 ? 1 : -1];

/* The time stamp of the newest utilisation samples (µs); each call takes a
 * new one. Under g_lock. */
static unsigned long long g_sample_clock = 1700000000000000ull;

/* The table's path into out; 0 when there is none. */
static int table_path(char* out, size_t cap) {
  const char* env = getenv("FAKE_NVML_PROCESSES");
  const char* key = scn_get(scn_nth(&g_scn, "system", 0), "processes");
  const char* slash = strrchr(g_scenario_path, '/');
  int n;
  if (env != NULL && *env != '\0')
    n = snprintf(out, cap, "%s", env);
  else if (key == NULL)
    return 0;
  else if (key[0] == '/' || slash == NULL)
    n = snprintf(out, cap, "%s", key);
  else
    n = snprintf(out, cap, "%.*s/%s", (int)(slash - g_scenario_path), g_scenario_path, key);
  return n > 0 && (size_t)n < cap;
}

/* The table as last parsed, with the file's identity then: a file renamed
 * over it (another inode) or rewritten (another size or time) is parsed
 * again; an unchanged one is not, so a round of 8 GPUs x 64 processes costs
 * a stat, as a real driver's list costs no parsing (docs/performance.md). */
#define FAKE_MAX_TABLE 4096
typedef struct {
  long long gpu, mig;
  fake_process p;
} fake_table_row;
static pthread_mutex_t g_table_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_table_row g_table[FAKE_MAX_TABLE]; /* under g_table_lock */
static unsigned g_table_rows;
static struct stat g_table_stat;
static char g_table_path[1024];

static int same_file(const struct stat* a, const struct stat* b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* One table line into row; 1 when it is one. */
static int table_row(const char* line, fake_table_row* row) {
  char buf[2100];
  static scn_record rec; /* 7 KiB: off the stack; under g_table_lock */
  long long v;
  const char* type;
  snprintf(buf, sizeof(buf), "process %s", line);
  row->mig = -1;
  if (scn_parse_line(buf, &rec) != 1 || !scn_get_ll(&rec, "gpu", &row->gpu) || !scn_get_ll(&rec, "pid", &v)) return 0;
  if (scn_get(&rec, "mig") != NULL && !scn_get_ll(&rec, "mig", &row->mig)) return 0;
  row->p.pid = (unsigned int)v;
  row->p.mem = scn_get_ll(&rec, "mem", &v) ? (unsigned long long)v : FAKE_VALUE_NOT_AVAILABLE;
  row->p.sm = scn_get_ll(&rec, "sm", &v) ? v : -1;
  type = scn_get(&rec, "type");
  row->p.list = type != NULL && strcmp(type, "graphics") == 0 ? LIST_GRAPHICS : LIST_COMPUTE;
  return 1;
}

/* Parses the table at path into g_table when it changed; 0 when it cannot be read. Under g_table_lock. */
static int load_table(const char* path) {
  char line[2048];
  struct stat st;
  FILE* f;
  if (stat(path, &st) != 0) return 0;
  if (g_table_stat.st_ino != 0 && strcmp(path, g_table_path) == 0 && same_file(&st, &g_table_stat)) return 1;
  if ((f = fopen(path, "r")) == NULL) return 0;
  g_table_rows = 0;
  while (g_table_rows < FAKE_MAX_TABLE && fgets(line, sizeof(line), f) != NULL)
    if (table_row(line, &g_table[g_table_rows])) ++g_table_rows;
  fstat(fileno(f), &g_table_stat);
  fclose(f);
  snprintf(g_table_path, sizeof(g_table_path), "%s", path);
  return 1;
}

/* The table's processes on d in list `list` (LIST_ANY: both); at most cap. */
static unsigned table_processes(const struct fake_device* d, int list, fake_process* out, unsigned cap) {
  char path[1024];
  unsigned n = 0, i;
  if (!table_path(path, sizeof(path))) return 0;
  pthread_mutex_lock(&g_table_lock);
  if (load_table(path))
    for (i = 0; i < g_table_rows && n < cap; ++i)
      if (g_table[i].gpu == d->gpu && g_table[i].mig == d->slot && (list == LIST_ANY || g_table[i].p.list == list))
        out[n++] = g_table[i].p;
  pthread_mutex_unlock(&g_table_lock);
  return n;
}

/* The job_mem of a MIG device of `gpu`, if one has it. */
static int any_mig_job_mem(int gpu, long long* mem) {
  int slot;
  for (slot = 0; slot < 8; ++slot) {
    const scn_record* r = mig_record(gpu, slot);
    if (r != NULL && scn_get_ll(r, "job_mem", mem)) return 1;
  }
  return 0;
}

/* job_mem=BYTES: this process's children on a GPU, or on a MIG device
 * (its mig line's job_mem; its GPU lists them too, as NVML lists every
 * instance's processes on a GPU in MIG mode); at most cap. */
static unsigned job_processes(const struct fake_device* d, fake_process* out, unsigned cap) {
  unsigned int pids[64];
  unsigned n, i;
  long long mem;
  if (!scn_get_ll(device_record(d), "job_mem", &mem) &&
      (d->slot >= 0 || !any_mig_job_mem(d->gpu, &mem)))
    return 0;
  n = child_pids(pids, cap < 64 ? cap : 64);
  for (i = 0; i < n; ++i) {
    out[i].pid = pids[i];
    out[i].mem = (unsigned long long)mem;
    out[i].sm = -1;
    out[i].list = LIST_COMPUTE;
  }
  return n;
}

/* Hands out n processes NVML's way: INSUFFICIENT_SIZE with the count
 * needed when *count is too small. A MIG device's processes carry its
 * gi/ci; a GPU's carry NVML's "none" (all ones). */
static nvmlReturn_t give_processes(const struct fake_device* d, const fake_process* p, unsigned n,
                                   unsigned int* count, nvmlProcessInfo_t* infos) {
  long long gi = 0xFFFFFFFFll, ci = 0xFFFFFFFFll;
  unsigned i;
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && infos == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0) {
    scn_get_ll(device_record(d), "gi", &gi);
    scn_get_ll(device_record(d), "ci", &ci);
  }
  for (i = 0; i < n; ++i) {
    infos[i].pid = p[i].pid;
    infos[i].usedGpuMemory = p[i].mem;
    infos[i].gpuInstanceId = (unsigned int)gi;
    infos[i].computeInstanceId = (unsigned int)ci;
  }
  *count = n;
  return NVML_SUCCESS;
}

static nvmlReturn_t running_processes(const char* fn, int list, nvmlDevice_t d, unsigned int* count,
                                      nvmlProcessInfo_t* infos) {
  fake_process p[FAKE_MAX_PROCESSES];
  unsigned n;
  nvmlReturn_t rc = enter(fn, d);
  if (rc != NVML_SUCCESS) return rc;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  n = table_processes(d, list, p, FAKE_MAX_PROCESSES);
  if (list == LIST_COMPUTE) n += job_processes(d, p + n, FAKE_MAX_PROCESSES - n);
  return give_processes(d, p, n, count, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  return running_processes("nvmlDeviceGetComputeRunningProcesses_v3", LIST_COMPUTE, d, count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  return running_processes("nvmlDeviceGetGraphicsRunningProcesses_v3", LIST_GRAPHICS, d, count, infos);
}

/* One sample, stamped now, for each table line of the GPU with sm= (both
 * lists); NOT_FOUND when none has it or none is newer than lastSeen;
 * NOT_SUPPORTED on a MIG device, as NVML. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t* samples,
                                             unsigned int* count, unsigned long long last_seen) {
  fake_process p[FAKE_MAX_PROCESSES];
  unsigned n, i, k = 0;
  unsigned long long now;
  nvmlReturn_t rc = enter("nvmlDeviceGetProcessUtilization", d);
  if (rc != NVML_SUCCESS) return rc;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0) return NVML_ERROR_NOT_SUPPORTED;
  n = table_processes(d, LIST_ANY, p, FAKE_MAX_PROCESSES);
  for (i = 0; i < n; ++i)
    if (p[i].sm >= 0) p[k++] = p[i];
  pthread_mutex_lock(&g_lock);
  now = ++g_sample_clock;
  pthread_mutex_unlock(&g_lock);
  if (k == 0 || now <= last_seen) return NVML_ERROR_NOT_FOUND;
  if (samples == NULL || *count < k) {
    *count = k;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (i = 0; i < k; ++i) {
    memset(&samples[i], 0, sizeof(samples[i]));
    samples[i].pid = p[i].pid;
    samples[i].timeStamp = now;
    samples[i].smUtil = (unsigned int)p[i].sm;
  }
  *count = k;
  return NVML_SUCCESS;
}
#endif /* FAKE_NVML_OLD */

/* ---- dcgm-exporter's fields and Xid (sense/nvml/nvml_sampler.cc) ----
 * gpu keys: minor=N (/dev/nvidiaN), mem_temp=C (NVML_FI_DEV_MEMORY_TEMP),
 * xid=79 or xid=13,48: the Xid events the GPU raises, each delivered once
 * per init by nvmlEventSetWait_v2 once the GPU is registered, in order.
 * Every whole GPU can be registered for Xid events. */
#ifndef FAKE_NVML_OLD
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef char fake_assert_event[sizeof(nvmlEventData_t) == 32 ? 1 : -1];

typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
  } value;
} nvmlFieldValue_t;
typedef char fake_assert_field[sizeof(nvmlFieldValue_t) == 40 ? 1 : -1];

#define FAKE_EVENT_XID 0x8ull
#define FAKE_FI_MEMORY_TEMP 82u
#define FAKE_FI_NVLINK_DATA_TX 138u
#define FAKE_FI_NVLINK_DATA_RX 139u
#define FAKE_SCOPE_ALL_LINKS 0xFFFFFFFFu

struct fake_event_set {
  int unused;
};
static struct fake_event_set g_event_set;

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* minor) {
  return gpu_uint("nvmlDeviceGetMinorNumber", d, "minor", minor);
}

/* nvlink_kib=TX/RX/STEP: the GPU's NVLink data counters in KiB summed over
 * its links (scopeId UINT_MAX), each call that asks for them STEP KiB on in
 * both directions. 1: the pair of counters of this call. */
static int nvlink_counters(const struct fake_device* d, unsigned long long* tx, unsigned long long* rx) {
  long long t, r, step;
  unsigned n;
  const char* raw = d->slot < 0 ? scn_get(gpu_record(d->gpu), "nvlink_kib") : NULL;
  if (raw == NULL || sscanf(raw, "%lld/%lld/%lld", &t, &r, &step) != 3) return 0;
  n = next_seq(d->gpu, SEQ_NVLINK);
  *tx = (unsigned long long)(t + step * (long long)n);
  *rx = (unsigned long long)(r + step * (long long)n);
  return 1;
}

static int asks_nvlink(int count, const nvmlFieldValue_t* values) {
  int i;
  for (i = 0; i < count; ++i)
    if (values[i].fieldId == FAKE_FI_NVLINK_DATA_TX || values[i].fieldId == FAKE_FI_NVLINK_DATA_RX) return 1;
  return 0;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  int i, have_links = 0;
  long long v;
  unsigned long long tx = 0, rx = 0;
  nvmlReturn_t rc = enter("nvmlDeviceGetFieldValues", d);
  if (rc != NVML_SUCCESS) return rc;
  if (count < 0 || (count > 0 && values == NULL)) return NVML_ERROR_INVALID_ARGUMENT;
  if (asks_nvlink(count, values)) have_links = nvlink_counters(d, &tx, &rx);
  for (i = 0; i < count; ++i) {
    unsigned id = values[i].fieldId;
    values[i].valueType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
    values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    if (id == FAKE_FI_MEMORY_TEMP && d->slot < 0 && scn_get_ll(gpu_record(d->gpu), "mem_temp", &v)) {
      values[i].value.uiVal = (unsigned int)v;
      values[i].nvmlReturn = NVML_SUCCESS;
    } else if ((id == FAKE_FI_NVLINK_DATA_TX || id == FAKE_FI_NVLINK_DATA_RX) && have_links &&
               values[i].scopeId == FAKE_SCOPE_ALL_LINKS) {
      values[i].valueType = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
      values[i].value.ullVal = id == FAKE_FI_NVLINK_DATA_TX ? tx : rx;
      values[i].nvmlReturn = NVML_SUCCESS;
    }
  }
  return NVML_SUCCESS;
}

/* enc_dec=ENC/DEC: the video encoder's and decoder's use, percent, over a
 * 167 ms sampling period (whole GPUs). */
static nvmlReturn_t codec_utilization(const char* fn, nvmlDevice_t d, int which, unsigned int* percent,
                                      unsigned int* period_us) {
  nvmlReturn_t rc = gpu_half(fn, d, "enc_dec", which, percent);
  if (rc == NVML_SUCCESS && period_us == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (rc == NVML_SUCCESS) *period_us = 167000;
  return rc;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int* percent, unsigned int* period_us) {
  return codec_utilization("nvmlDeviceGetEncoderUtilization", d, 0, percent, period_us);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int* percent, unsigned int* period_us) {
  return codec_utilization("nvmlDeviceGetDecoderUtilization", d, 1, percent, period_us);
}

/* nvlink_err=REPLAY/RECOVERY/CRC_FLIT/CRC_DATA: each link's error counters
 * (nvmlNvLinkErrorCounter_t 0-3), every link below nvlinks=.../TOTAL; with
 * nvlink_err_grow=LINK/STEP, that link's CRC_FLIT count STEP more at each
 * read of it. No nvlink_err key: NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter,
                                             unsigned long long* value) {
  long long v[4], up, total, grow_link, step;
  const scn_record* r;
  nvmlReturn_t rc = enter("nvmlDeviceGetNvLinkErrorCounter", d);
  if (rc != NVML_SUCCESS) return rc;
  if (value == NULL || link >= FAKE_MAX_LINKS || counter < 0 || counter > 4) return NVML_ERROR_INVALID_ARGUMENT;
  r = d->slot < 0 ? gpu_record(d->gpu) : NULL;
  if (r == NULL || !scn_get_pair(r, "nvlinks", &up, &total) || (long long)link >= total || counter == 4 ||
      scn_get(r, "nvlink_err") == NULL ||
      sscanf(scn_get(r, "nvlink_err"), "%lld/%lld/%lld/%lld", &v[0], &v[1], &v[2], &v[3]) != 4)
    return NVML_ERROR_NOT_SUPPORTED;
  *value = (unsigned long long)v[counter];
  if (counter == 2 && scn_get_pair(r, "nvlink_err_grow", &grow_link, &step) && grow_link == (long long)link)
    *value += (unsigned long long)(step * (long long)next_seq(d->gpu, SEQ_NVLINK_ERR));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(struct fake_event_set** set) {
  nvmlReturn_t rc = enter("nvmlEventSetCreate", NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (set == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *set = &g_event_set;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, struct fake_event_set* set) {
  nvmlReturn_t rc = enter("nvmlDeviceRegisterEvents", d);
  if (rc != NVML_SUCCESS) return rc;
  if (set != &g_event_set) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->slot >= 0) return NVML_ERROR_NOT_SUPPORTED;
  if (types & FAKE_EVENT_XID) {
    pthread_mutex_lock(&g_lock);
    g_xid_watched[d->gpu] = 1;
    pthread_mutex_unlock(&g_lock);
  }
  return NVML_SUCCESS;
}

/* The nth number of a "13,48" list, or -1. */
static long long nth_of_list(const char* list, int nth) {
  char* end;
  long long v;
  while (list != NULL && *list) {
    v = strtoll(list, &end, 0);
    if (end == list) return -1;
    if (nth-- == 0) return v;
    list = *end == ',' ? end + 1 : NULL;
  }
  return -1;
}

/* Never waits: the exporter calls it with timeout 0. NVML_ERROR_TIMEOUT
 * (10) when no event is left. */
nvmlReturn_t nvmlEventSetWait_v2(struct fake_event_set* set, nvmlEventData_t* data, unsigned int timeout_ms) {
  int gpu;
  nvmlReturn_t rc = enter("nvmlEventSetWait_v2", NULL);
  (void)timeout_ms;
  if (rc != NVML_SUCCESS) return rc;
  if (set != &g_event_set || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_lock);
  for (gpu = 0; gpu < gpu_count(); ++gpu) {
    long long xid = nth_of_list(scn_get(gpu_record(gpu), "xid"), g_xid_next[gpu]);
    if (!g_xid_watched[gpu] || xid < 0) continue;
    ++g_xid_next[gpu];
    pthread_mutex_unlock(&g_lock);
    memset(data, 0, sizeof(*data));
    data->device = &g_gpus[gpu];
    data->eventType = FAKE_EVENT_XID;
    data->eventData = (unsigned long long)xid;
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
    return NVML_SUCCESS;
  }
  pthread_mutex_unlock(&g_lock);
  return 10; /* NVML_ERROR_TIMEOUT */
}

nvmlReturn_t nvmlEventSetFree(struct fake_event_set* set) {
  nvmlReturn_t rc = enter("nvmlEventSetFree", NULL);
  if (rc != NVML_SUCCESS) return rc;
  return set == &g_event_set ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
#endif /* FAKE_NVML_OLD */

/* ---- NVML GPM (Hopper and newer; a current driver only) ----
 * A GPU whose cc is 9.0 or newer supports GPM; older ones answer
 * isSupportedDevice=0 and NOT_SUPPORTED to a sample. Its figures, in
 * percent, come from gpm=GR/SM/OCCUPANCY/TENSOR/FP32/FP16/DRAM on its gpu
 * line (all 0 without the key: an idle GPU); a MIG instance's from the
 * gpm key of its mig line, found by its gi (nvmlGpmMigSampleGet). */
#ifndef FAKE_NVML_OLD

#define FAKE_GPM_METRIC_MAX 333 /* NVML_GPM_METRIC_MAX of CUDA 13's nvml.h */

typedef struct fake_gpm_sample {
  int taken; /* 1 once a sample was taken into it */
  int gpu, gi; /* gi < 0: the whole GPU */
  unsigned serial;
} *nvmlGpmSample_t;

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *shortName, *longName, *unit;
  } metricInfo;
} nvmlGpmMetric_t;

typedef struct {
  unsigned int version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[FAKE_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
  unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;

typedef char fake_assert_gpm_metric[sizeof(nvmlGpmMetric_t) == 40 ? 1 : -1];
typedef char fake_assert_gpm_get[sizeof(nvmlGpmMetricsGet_t) == 24 + 40 * FAKE_GPM_METRIC_MAX ? 1 : -1];

static unsigned g_gpm_serial; /* under g_lock */

static int gpm_capable(int gpu) {
  int major = 0, minor = 0;
  const char* cc = scn_get(gpu_record(gpu), "cc");
  return cc != NULL && sscanf(cc, "%d.%d", &major, &minor) == 2 && major >= 9;
}

/* The mig line of a GPU's instance with GPU instance id gi, or NULL. */
static const scn_record* mig_by_gi(int gpu, long long gi) {
  int slot;
  long long v;
  for (slot = 0; slot < FAKE_MAX_MIGS; ++slot) {
    const scn_record* r = mig_record(gpu, slot);
    if (r != NULL && scn_get_ll(r, "gi", &v) && v == gi) return r;
  }
  return NULL;
}

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  nvmlReturn_t rc = enter("nvmlGpmQueryDeviceSupport", d);
  if (rc != NVML_SUCCESS) return rc;
  if (s == NULL || d->slot >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (s->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  s->isSupportedDevice = (unsigned)gpm_capable(d->gpu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* out) {
  nvmlReturn_t rc = enter("nvmlGpmSampleAlloc", NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *out = calloc(1, sizeof(**out));
  return *out != NULL ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  trace_call("nvmlGpmSampleFree");
  if (s == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  free(s);
  return NVML_SUCCESS;
}

static nvmlReturn_t take_sample(nvmlGpmSample_t s, int gpu, int gi) {
  if (s == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpm_capable(gpu)) return NVML_ERROR_NOT_SUPPORTED;
  s->taken = 1, s->gpu = gpu, s->gi = gi;
  pthread_mutex_lock(&g_lock);
  s->serial = ++g_gpm_serial;
  pthread_mutex_unlock(&g_lock);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  nvmlReturn_t rc = enter("nvmlGpmSampleGet", d);
  if (rc != NVML_SUCCESS) return rc;
  if (d->slot >= 0) return NVML_ERROR_INVALID_ARGUMENT; /* a MIG instance: nvmlGpmMigSampleGet */
  return take_sample(s, d->gpu, -1);
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int gpuInstanceId, nvmlGpmSample_t s) {
  long long on = 0;
  nvmlReturn_t rc = enter("nvmlGpmMigSampleGet", d);
  if (rc != NVML_SUCCESS) return rc;
  if (d->slot >= 0 || !scn_get_ll(gpu_record(d->gpu), "mig", &on) || on != 1) return NVML_ERROR_INVALID_ARGUMENT;
  if (mig_by_gi(d->gpu, gpuInstanceId) == NULL) return NVML_ERROR_NOT_FOUND;
  return take_sample(s, d->gpu, (int)gpuInstanceId);
}

/* The n figures of a key "a/b/..."; zeros without it. */
static int slash_values(const scn_record* r, const char* key, double* v, int n) {
  const char* p = scn_get(r, key);
  char* end;
  int i;
  for (i = 0; i < n; ++i) v[i] = 0;
  if (p == NULL) return 1;
  for (i = 0; i < n; ++i) {
    v[i] = strtod(p, &end);
    if (end == p || (i < n - 1 && *end != '/') || (i == n - 1 && *end != '\0')) return 0;
    p = end + 1;
  }
  return 1;
}

/* The seven figures of gpm=a/b/c/d/e/f/g, then PCIe TX and RX MiB/s of
 * gpm_pcie=TX/RX (zeros without them: an idle GPU). */
static int gpm_values(const scn_record* r, double v[9]) {
  return slash_values(r, "gpm", v, 7) && slash_values(r, "gpm_pcie", v + 7, 2);
}

/* The metric ids gpuenv reads, in gpm_values order. */
static int gpm_index(unsigned id) {
  static const unsigned ids[9] = {1, 2, 3, 5, 12, 13, 10, 20, 21};
  int i;
  for (i = 0; i < 9; ++i)
    if (ids[i] == id) return i;
  return -1;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  static char short_name[] = "fake", long_name[] = "fake GPM metric", unit[] = "%";
  const scn_record* r;
  double v[9];
  unsigned i;
  nvmlReturn_t rc = enter("nvmlGpmMetricsGet", NULL);
  if (rc != NVML_SUCCESS) return rc;
  if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (m->numMetrics == 0 || m->numMetrics > 98 || m->sample1 == NULL || m->sample2 == NULL) /* 98: the smallest MAX */
    return NVML_ERROR_INVALID_ARGUMENT;
  if (!m->sample1->taken || !m->sample2->taken || m->sample1->gpu != m->sample2->gpu ||
      m->sample1->gi != m->sample2->gi || m->sample1->serial >= m->sample2->serial)
    return NVML_ERROR_INVALID_ARGUMENT;
  r = m->sample2->gi < 0 ? gpu_record(m->sample2->gpu) : mig_by_gi(m->sample2->gpu, m->sample2->gi);
  if (r == NULL || !gpm_values(r, v)) return NVML_ERROR_UNKNOWN;
  for (i = 0; i < m->numMetrics; ++i) {
    int k = gpm_index(m->metrics[i].metricId);
    m->metrics[i].nvmlReturn = k < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
    m->metrics[i].value = k < 0 ? 0 : v[k];
    m->metrics[i].metricInfo.shortName = short_name;
    m->metrics[i].metricInfo.longName = long_name;
    m->metrics[i].metricInfo.unit = unit;
  }
  return NVML_SUCCESS;
}

#endif /* FAKE_NVML_OLD */
