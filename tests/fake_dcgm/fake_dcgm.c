/* A stand-in libdcgm.so.4 (embedded mode only), so the exporter's DCGM path
 * (src/sense/dcgm/) runs in CI. It reads the stand-in NVML's scenario
 * (FAKE_NVML_SCENARIO, tests/fake_nvml/scenario.h): each gpu line is a GPU
 * DCGM supports, numbered from the last line (DCGM's ids are not NVML's
 * indices, so a reader must match GPUs by UUID), and its key
 *   dcgm=GR/SM/OCCUPANCY/TENSOR/FP32/FP16/DRAM
 * gives DCGM_FI_PROF_GR_ENGINE_ACTIVE, _SM_ACTIVE, _SM_OCCUPANCY,
 * _PIPE_TENSOR_ACTIVE, _PIPE_FP32_ACTIVE, _PIPE_FP16_ACTIVE and
 * _DRAM_ACTIVE as ratios; "-" (or no dcgm= key) is DCGM's blank value.
 * FAKE_DCGM_FAULT=CALL=CODE makes one call fail with CODE: start
 * (dcgmStartEmbedded_v2), watch (dcgmWatchFields) or latest
 * (dcgmEntitiesGetLatestValues for the profiling fields); init fails
 * dcgmInit. FAKE_DCGM_TRACE=FILE appends each call's name. C99. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fake_nvml/scenario.h"

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;

enum { OK = 0, BADPARAM = -2, NOT_SUPPORTED = -6, UNINITIALIZED = -4 };
#define FP64_BLANK 140737488355328.0

typedef struct {
  unsigned version;
  int op_mode;
  dcgmHandle_t handle;
  const char* log_file;
  int severity;
  unsigned deny_list_count;
  unsigned deny_list[10];
} start_params;

typedef struct {
  int group;
  unsigned id;
} entity_pair;

typedef struct {
  unsigned version;
  int entity_group;
  unsigned entity_id;
  unsigned short field_id, field_type;
  int status;
  unsigned unused;
  int64_t ts;
  union {
    int64_t i64;
    double dbl;
    char str[256];
    char blob[4096];
  } value;
} field_value;

static scn_scenario g_scn;
static int g_loaded, g_init, g_started, g_watching;
static FILE* g_trace;

static void trace(const char* fn) {
  const char* path = getenv("FAKE_DCGM_TRACE");
  if (path != NULL && g_trace == NULL) g_trace = fopen(path, "a");
  scn_trace(g_trace, fn);
}

/* The code FAKE_DCGM_FAULT gives `call`, or 0. */
static int fault(const char* call) {
  const char* f = getenv("FAKE_DCGM_FAULT");
  size_t n = strlen(call);
  if (f == NULL || strncmp(f, call, n) != 0 || f[n] != '=') return 0;
  return atoi(f + n + 1);
}

static int load(void) {
  char err[256];
  const char* path = getenv("FAKE_NVML_SCENARIO");
  if (!g_loaded) g_loaded = path != NULL && scn_load(&g_scn, path, err, sizeof err) == 0 ? 1 : -1;
  return g_loaded == 1;
}

static int gpus(void) { return scn_count(&g_scn, "gpu"); }

/* The gpu line of DCGM's id (the last line is id 0). */
static const scn_record* gpu_of(unsigned id) {
  int n = gpus();
  return (int)id < n ? scn_nth(&g_scn, "gpu", n - 1 - (int)id) : NULL;
}

/* The nth ratio of the gpu line's dcgm= key, or the blank value. */
static double ratio(const scn_record* g, int nth) {
  const char* v = scn_get(g, "dcgm");
  for (int i = 0; v != NULL && i < nth; ++i) {
    v = strchr(v, '/');
    if (v != NULL) ++v;
  }
  if (v == NULL || *v == '-' || *v == '\0' || *v == '/') return FP64_BLANK;
  return strtod(v, NULL);
}

dcgmReturn_t dcgmInit(void) {
  trace("dcgmInit");
  if (fault("init")) return fault("init");
  g_init = load();
  return g_init ? OK : -3; /* DCGM_ST_INIT_ERROR */
}

dcgmReturn_t dcgmShutdown(void) {
  trace("dcgmShutdown");
  g_init = g_started = g_watching = 0;
  return OK;
}

dcgmReturn_t dcgmStartEmbedded_v2(start_params* p) {
  trace("dcgmStartEmbedded_v2");
  if (!g_init) return UNINITIALIZED;
  if (p == NULL || p->version != (sizeof(start_params) | 1u << 24) || p->op_mode != 1) return -25; /* VER_MISMATCH */
  if (fault("start")) return fault("start");
  g_started = 1;
  p->handle = 0x5eed;
  return OK;
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h) {
  trace("dcgmStopEmbedded");
  if (h != 0x5eed || !g_started) return BADPARAM;
  g_started = g_watching = 0;
  return OK;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t h, unsigned ids[32], int* count) {
  trace("dcgmGetAllSupportedDevices");
  if (h != 0x5eed || !g_started) return BADPARAM;
  *count = gpus() < 32 ? gpus() : 32;
  for (int i = 0; i < *count; ++i) ids[i] = (unsigned)i;
  return OK;
}

dcgmReturn_t dcgmGroupCreate(dcgmHandle_t h, int type, const char* name, uintptr_t* id) {
  trace("dcgmGroupCreate");
  if (h != 0x5eed || type != 1 || name == NULL) return BADPARAM;
  *id = 7;
  return OK;
}

dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t h, uintptr_t id) {
  trace("dcgmGroupDestroy");
  return h == 0x5eed && id == 7 ? OK : BADPARAM;
}

dcgmReturn_t dcgmGroupAddDevice(dcgmHandle_t h, uintptr_t id, unsigned gpu) {
  trace("dcgmGroupAddDevice");
  return h == 0x5eed && id == 7 && gpu_of(gpu) != NULL ? OK : BADPARAM;
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int n, unsigned short* ids, const char* name, uintptr_t* id) {
  trace("dcgmFieldGroupCreate");
  if (h != 0x5eed || n < 1 || ids == NULL || name == NULL) return BADPARAM;
  *id = 9;
  return OK;
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t h, uintptr_t id) {
  trace("dcgmFieldGroupDestroy");
  return h == 0x5eed && id == 9 ? OK : BADPARAM;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, uintptr_t group, uintptr_t fields, long long every_us, double keep_s,
                             int keep_samples) {
  trace("dcgmWatchFields");
  if (h != 0x5eed || group != 7 || fields != 9 || every_us <= 0 || keep_s <= 0 || keep_samples < 0) return BADPARAM;
  if (fault("watch")) return fault("watch");
  g_watching = 1;
  return OK;
}

dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t h, uintptr_t group, uintptr_t fields) {
  trace("dcgmUnwatchFields");
  if (h != 0x5eed || group != 7 || fields != 9) return BADPARAM;
  g_watching = 0;
  return OK;
}

static void fill(field_value* v, const entity_pair* e, unsigned short field) {
  const scn_record* g = gpu_of(e->id);
  memset(v, 0, sizeof *v);
  v->version = (unsigned)sizeof *v | 2u << 24;
  v->entity_group = e->group;
  v->entity_id = e->id;
  v->field_id = field;
  v->status = g != NULL && e->group == 1 ? OK : NOT_SUPPORTED;
  if (g == NULL) return;
  if (field == 54) {
    const char* uuid = scn_get(g, "uuid");
    v->field_type = 's';
    snprintf(v->value.str, sizeof v->value.str, "%s", uuid ? uuid : "<<<NULL>>>");
    return;
  }
  static const unsigned short order[] = {1001, 1002, 1003, 1004, 1007, 1008, 1005};
  v->field_type = 'd';
  v->value.dbl = FP64_BLANK;
  for (int i = 0; i < 7; ++i)
    if (order[i] == field && g_watching) v->value.dbl = ratio(g, i);
}

/* Answers in the reverse of the order asked, as DCGM may reorder. */
dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t h, entity_pair* entities, unsigned n, unsigned short* fields,
                                         unsigned nf, unsigned flags, field_value* values) {
  unsigned k = 0;
  trace("dcgmEntitiesGetLatestValues");
  if (h != 0x5eed || !g_started || entities == NULL || fields == NULL || values == NULL) return BADPARAM;
  if (!(nf == 1 && fields[0] == 54) && fault("latest")) return fault("latest");
  (void)flags;
  for (unsigned i = n; i-- > 0;)
    for (unsigned f = 0; f < nf; ++f) fill(&values[k++], &entities[i], fields[f]);
  return OK;
}

const char* errorString(dcgmReturn_t rc) {
  switch (rc) {
    case BADPARAM: return "A bad parameter was passed to a function";
    case NOT_SUPPORTED: return "This request is not supported";
    case -33: return "This request is serviced by a module of DCGM that is not currently loaded";
    default: return "Unknown Error";
  }
}
