/* A stand-in libcuda.so.1 for tests: the CUDA driver subset gpuenv uses,
 * answering from the scenario file (see ../fake_nvml/scenario.h) named by
 * FAKE_CUDA_SCENARIO, read at cuInit time. The gpu lines give name, uuid,
 * pci, cc, mem and sms; `system cuda=12060` the driver version and
 * `cuda_order=1,0` the CUDA ordinals (FASTEST_FIRST) as NVML indices;
 * `fault cuinit=N` makes cuInit fail; `fault fn=NAME code=N [gpu=ordinal]`
 * any other call. FAKE_CUDA_TRACE names a file that receives the name of
 * every call. Signatures follow cuda.h; nothing here
 * includes it. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fake_nvml/scenario.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct {
  char bytes[16];
} CUuuid;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
};

static scn_scenario g_scn;
static CUresult g_init = CUDA_ERROR_NOT_INITIALIZED; /* cuInit's result */
static FILE* g_trace;
static char g_trace_path[1024];

/* gpuenv never unloads libcuda (RTLD_NODELETE), so this library outlives a
 * test: follow FAKE_CUDA_TRACE as it changes between them. */
static void trace(const char* fn) {
  const char* path = getenv("FAKE_CUDA_TRACE");
  if (path == NULL) path = "";
  if (strcmp(path, g_trace_path) != 0) {
    if (g_trace != NULL) fclose(g_trace);
    snprintf(g_trace_path, sizeof(g_trace_path), "%s", path);
    g_trace = *path ? fopen(path, "a") : NULL;
  }
  scn_trace(g_trace, fn);
}

__attribute__((destructor)) static void unload(void) {
  if (g_trace != NULL) fclose(g_trace);
  g_trace = NULL;
}

static int load(void) {
  char err[256];
  const char* path = getenv("FAKE_CUDA_SCENARIO");
  int ok = path != NULL && scn_load(&g_scn, path, err, sizeof(err)) == 0;
  if (!ok) fprintf(stderr, "fake_cuda: %s\n", path ? err : "FAKE_CUDA_SCENARIO is not set");
  return ok;
}

CUresult cuInit(unsigned int flags) {
  int fault;
  trace("cuInit");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!load()) return g_init = CUDA_ERROR_UNKNOWN;
  fault = scn_fault_value(&g_scn, "cuinit");
  return g_init = fault;
}

/* Works before cuInit, as the real one does (reading the scenario anew:
 * the library stays loaded from one test to the next). */
CUresult cuDriverGetVersion(int* version) {
  long long v;
  trace("cuDriverGetVersion");
  if (version == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (!load()) return CUDA_ERROR_UNKNOWN;
  if (!scn_get_ll(scn_nth(&g_scn, "system", 0), "cuda", &v)) return CUDA_ERROR_UNKNOWN;
  *version = (int)v;
  return CUDA_SUCCESS;
}

static int device_count(void) { return scn_count(&g_scn, "gpu"); }

/* The gpu line of a CUDA ordinal, through cuda_order when given. */
static const scn_record* device_record(CUdevice dev) {
  const char* order = scn_get(scn_nth(&g_scn, "system", 0), "cuda_order");
  int gpu = dev;
  while (order != NULL && dev-- > 0) {
    order = strchr(order, ',');
    if (order != NULL) ++order;
  }
  if (order != NULL) gpu = atoi(order);
  return scn_nth(&g_scn, "gpu", gpu);
}

/* Trace, then the sticky cuInit result, then the device and faults. */
static CUresult enter(const char* fn, CUdevice dev, int check_device) {
  CUresult rc;
  trace(fn);
  if (g_init != CUDA_SUCCESS) return g_init; /* a failed cuInit is sticky */
  if (check_device && (dev < 0 || dev >= device_count())) return CUDA_ERROR_INVALID_DEVICE;
  rc = scn_fault(&g_scn, fn, check_device ? dev : -1);
  return rc;
}

CUresult cuDeviceGetCount(int* count) {
  CUresult rc = enter("cuDeviceGetCount", 0, 0);
  if (rc != CUDA_SUCCESS) return rc;
  if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  CUresult rc = enter("cuDeviceGet", ordinal, 1);
  if (rc != CUDA_SUCCESS) return rc;
  if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  const char* value;
  CUresult rc = enter("cuDeviceGetName", dev, 1);
  if (rc != CUDA_SUCCESS) return rc;
  if (name == NULL || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  value = scn_get(device_record(dev), "name");
  snprintf(name, (size_t)len, "%s", value ? value : "");
  return CUDA_SUCCESS;
}

/* One attribute of a gpu line; -1 when the line lacks it. */
static long long attribute(const scn_record* r, int attr) {
  unsigned int dom = 0, bus = 0, devno = 0;
  int major = -1, minor = -1;
  long long v = -1;
  const char* pci = scn_get(r, "pci");
  const char* cc = scn_get(r, "cc");
  if (pci != NULL && sscanf(pci, "%x:%x:%x.", &dom, &bus, &devno) != 3) pci = NULL;
  if (cc != NULL && sscanf(cc, "%d.%d", &major, &minor) != 2) major = minor = -1;
  switch (attr) {
    case 16:
      return scn_get_ll(r, "sms", &v) ? v : -1; /* MULTIPROCESSOR_COUNT */
    case 33:
      return pci ? (long long)bus : -1; /* PCI_BUS_ID */
    case 34:
      return pci ? (long long)devno : -1; /* PCI_DEVICE_ID */
    case 50:
      return pci ? (long long)dom : -1; /* PCI_DOMAIN_ID */
    case 75:
      return major; /* COMPUTE_CAPABILITY_MAJOR */
    case 76:
      return minor; /* COMPUTE_CAPABILITY_MINOR */
    default:
      return -1;
  }
}

CUresult cuDeviceGetAttribute(int* value, int attr, CUdevice dev) {
  long long v;
  CUresult rc = enter("cuDeviceGetAttribute", dev, 1);
  if (rc != CUDA_SUCCESS) return rc;
  if (value == NULL) return CUDA_ERROR_INVALID_VALUE;
  v = attribute(device_record(dev), attr);
  if (v < 0) return CUDA_ERROR_INVALID_VALUE;
  *value = (int)v;
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  long long v;
  CUresult rc = enter("cuDeviceTotalMem_v2", dev, 1);
  if (rc != CUDA_SUCCESS) return rc;
  if (bytes == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (!scn_get_ll(device_record(dev), "mem", &v)) return CUDA_ERROR_NOT_SUPPORTED;
  *bytes = (size_t)v;
  return CUDA_SUCCESS;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* "GPU-8a3c2d1e-...": 32 hex digits after the prefix, dashes skipped. */
static CUresult parse_uuid(const char* text, CUuuid* out) {
  int n = 0;
  const char* p = text ? strchr(text, '-') : NULL;
  if (p == NULL) return CUDA_ERROR_NOT_SUPPORTED;
  for (++p; *p && n < 32; ++p) {
    int nibble = hex_digit(*p);
    if (*p == '-') continue;
    if (nibble < 0) return CUDA_ERROR_UNKNOWN;
    if (n % 2 == 0)
      out->bytes[n / 2] = (char)(nibble << 4);
    else
      out->bytes[n / 2] = (char)(out->bytes[n / 2] | nibble);
    ++n;
  }
  return n == 32 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

static CUresult uuid(const char* fn, CUuuid* out, CUdevice dev) {
  CUresult rc = enter(fn, dev, 1);
  if (rc != CUDA_SUCCESS) return rc;
  if (out == NULL) return CUDA_ERROR_INVALID_VALUE;
  return parse_uuid(scn_get(device_record(dev), "uuid"), out);
}

CUresult cuDeviceGetUuid(CUuuid* out, CUdevice dev) { return uuid("cuDeviceGetUuid", out, dev); }

CUresult cuDeviceGetUuid_v2(CUuuid* out, CUdevice dev) {
  return uuid("cuDeviceGetUuid_v2", out, dev);
}

CUresult cuGetErrorString(CUresult rc, const char** text) {
  if (text == NULL) return CUDA_ERROR_INVALID_VALUE;
  switch (rc) {
    case 0:
      *text = "no error";
      break;
    case 100:
      *text = "no CUDA-capable device is detected";
      break;
    case 802:
      *text = "system not yet initialized";
      break;
    case 803:
      *text = "system has unsupported display driver / cuda driver combination";
      break;
    default:
      *text = "unknown error";
      break;
  }
  return CUDA_SUCCESS;
}
