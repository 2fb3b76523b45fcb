/* Scenario files for the stand-in NVIDIA libraries (fake_nvml.c and
 * fake_cuda.c). One record per line: a kind word, then key=value tokens.
 * Values may be "double quoted" to hold spaces; '#' starts a comment.
 *
 *   system driver=580.95.05 cuda=13000 cuda_order=1,0
 *   gpu name="NVIDIA H200" cc=9.0 mem=150754820096 free=... numa=0 ...
 *   mig gpu=0 slot=1 name="..." uuid=MIG-... mem=... gi=3 ci=0
 *       attrs=28/2/1/0/0/0/2/2/19968   # nvmlDeviceGetAttributes_v2: SMs, shared
 *                                      # copy/decoder/encoder/JPEG/OFA engines,
 *                                      # GI and CI slices, MiB
 *   pair a=0 b=1 topo=40 p2p=0 nvlink=0     # one pair (either order)
 *   pairs topo=50 p2p=0 nvlink=0            # every pair not listed
 *   fault init=18                           # nvmlInit* returns 18
 *   fault lost=1 after=2                    # GPU 1: GPU_IS_LOST from its 3rd query on
 *                                           # (queries about a pair do not count)
 *   fault fn=nvmlDeviceGetPowerManagementLimit code=999 gpu=0
 *   fault cuinit=802                        # cuInit returns 802
 *   fault fn=nvmlDeviceGetName delay_ms=20  # each call takes 20 ms
 *
 * Health keys of a gpu line (read only with SenseOptions::with_health):
 *   events=0x60 temp=87 ecc=1/1 ecc_uncorrected=2 retired_pending=0
 *   remap=1/0 remap_rows=0/1 fabric=3 fabric_status=0
 * (events: nvmlClocksEventReasons bits; ecc: current/pending mode; remap:
 * pending/failure; fabric: nvmlGpuFabricState_t 0-3.)
 *
 * What `gpuenv export` samples (gpu line keys):
 *   util=75/40 clocks=1980/3201 power_draw=650000 energy=123456789
 *   pcie_replay=3 ecc_corrected=12   (pcie_replay=3/2: 2 more each read)
 * (util: GPU/memory percent; clocks: current SM/memory MHz; power_draw mW;
 * energy mJ since the driver loaded, or energy=START/STEP: START at the
 * first read and STEP mJ more at each read after it, as pcie_replay=N/STEP.)
 * For dcgm-exporter's fields and Xid: minor=N (/dev/nvidiaN),
 * mem_temp=C, xid=79 or xid=13,48 (the Xid events the GPU raises, in order),
 * nvlink_kib=TX/RX/STEP (NVLink data KiB over all links, STEP more each read).
 * enc_dec=ENC/DEC (video encoder/decoder percent); pcie_tx=KIB,... and
 * pcie_rx=KIB,... (nvmlDeviceGetPcieThroughput KiB/s, cycling per call);
 * nvlink_err=REPLAY/RECOVERY/CRC_FLIT/CRC_DATA (each link's error counts)
 * and nvlink_err_grow=LINK/STEP (that link's CRC_FLIT count STEP more each read).
 *
 * NVML GPM (a gpu line with cc 9.0 or newer; a mig line, found by its gi):
 *   gpm=GR/SM/OCCUPANCY/TENSOR/FP32/FP16/DRAM   (percent; all 0 when absent)
 *   gpm_pcie=TX/RX                              (PCIe MiB/s; 0 when absent)
 *
 * The processes on the GPUs (nvmlDeviceGetComputeRunningProcesses_v3,
 * nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDeviceGetProcessUtilization)
 * come from a process table: the file named by the environment variable
 * FAKE_NVML_PROCESSES, else by `processes=PATH` on the system line (a
 * relative PATH is relative to the scenario file's directory); the
 * environment wins. A call that lists processes or their utilisation reads
 * it again whenever it changed (another inode, size or modification time),
 * so a test may change it while the exporter runs
 * (write a new file and rename it over the old one, so that no call reads
 * half of it). No table, or a missing file: no processes. One process a line,
 * '#' starts a comment:
 *   gpu=0 pid=1234 mem=8589934592 sm=35          # a compute process of GPU 0
 *   gpu=0 pid=1240 mem=- type=graphics           # in the graphics list
 *   gpu=1 mig=2 pid=2001 mem=1073741824          # on GPU 1's MIG device in slot 2
 * gpu= (NVML index) and pid= are required; mig=SLOT names a MIG device by
 * the slot its mig line has, and puts the process on that device's lists
 * only (a GPU's lists hold its lines without mig=, a MIG device's the
 * lines with its slot); mem= is usedGpuMemory in bytes, and "-" (or no
 * mem=) NVML_VALUE_NOT_AVAILABLE; type=graphics lists it in the graphics
 * list, else it is in the compute list (a PID may have a line in each);
 * sm= is its smUtil percent for nvmlDeviceGetProcessUtilization, which
 * answers a GPU (never a MIG device: NOT_SUPPORTED, as NVML) with one
 * sample per line of the GPU that has sm=, all stamped with a time (µs)
 * that grows by 1 at each call, and NOT_FOUND when no line has sm= (or the
 * time is not after lastSeenTimeStamp). A gpu line's job_mem=BYTES lists
 * the calling process's children in the GPU's compute list after the
 * table's processes, each using BYTES.
 *
 * A key missing from a gpu line makes the matching query answer "not
 * supported". Everything is static storage: nothing to free. C99. */
#ifndef GPUENV_FAKE_SCENARIO_H
#define GPUENV_FAKE_SCENARIO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each user calls only some of these helpers. */
#define SCN_FN static __attribute__((unused))

#define SCN_MAX_RECORDS 64
#define SCN_MAX_KEYS 48
#define SCN_KEY_LEN 24
#define SCN_VALUE_LEN 128

typedef struct {
  char key[SCN_KEY_LEN];
  char value[SCN_VALUE_LEN];
} scn_kv;

typedef struct {
  char kind[SCN_KEY_LEN];
  int n;
  scn_kv kv[SCN_MAX_KEYS];
} scn_record;

typedef struct {
  int n;
  scn_record rec[SCN_MAX_RECORDS];
} scn_scenario;

SCN_FN const char* scn_skip_space(const char* p) {
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
  return p;
}

/* Copies one word (up to '=', space or end; or a "quoted" run) into out.
 * Returns the position after it, or NULL when it does not fit or a quote
 * is unterminated. */
SCN_FN const char* scn_word(const char* p, char* out, size_t cap, int stop_at_equals) {
  size_t n = 0;
  int quoted = (*p == '"');
  if (quoted) ++p;
  while (*p && (quoted ? *p != '"'
                       : (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' &&
                          !(stop_at_equals && *p == '=')))) {
    if (n + 1 >= cap) return NULL;
    out[n++] = *p++;
  }
  out[n] = '\0';
  if (quoted) {
    if (*p != '"') return NULL;
    ++p;
  }
  return p;
}

/* Parses one line into rec; returns 0 for a blank line, 1 for a record,
 * -1 for an error. */
SCN_FN int scn_parse_line(const char* p, scn_record* rec) {
  memset(rec, 0, sizeof(*rec));
  p = scn_skip_space(p);
  if (*p == '\0' || *p == '#') return 0;
  p = scn_word(p, rec->kind, sizeof(rec->kind), 1);
  if (p == NULL) return -1;
  for (p = scn_skip_space(p); *p && *p != '#'; p = scn_skip_space(p)) {
    scn_kv* kv;
    if (rec->n == SCN_MAX_KEYS) return -1;
    kv = &rec->kv[rec->n++];
    p = scn_word(p, kv->key, sizeof(kv->key), 1);
    if (p == NULL || *p != '=') return -1;
    p = scn_word(p + 1, kv->value, sizeof(kv->value), 0);
    if (p == NULL) return -1;
  }
  return 1;
}

/* Loads path into s. Returns 0, or -1 with a message in err. */
SCN_FN int scn_load(scn_scenario* s, const char* path, char* err, size_t errlen) {
  char line[2048];
  int lineno = 0;
  FILE* f = fopen(path, "r");
  memset(s, 0, sizeof(*s));
  if (f == NULL) {
    snprintf(err, errlen, "cannot open scenario %s", path);
    return -1;
  }
  while (fgets(line, sizeof(line), f) != NULL) {
    int rc;
    ++lineno;
    if (s->n == SCN_MAX_RECORDS)
      rc = -1;
    else
      rc = scn_parse_line(line, &s->rec[s->n]);
    if (rc < 0) {
      snprintf(err, errlen, "%s:%d: cannot parse this line", path, lineno);
      fclose(f);
      return -1;
    }
    s->n += rc;
  }
  fclose(f);
  return 0;
}

SCN_FN const char* scn_get(const scn_record* r, const char* key) {
  int i;
  if (r == NULL) return NULL;
  for (i = 0; i < r->n; ++i)
    if (strcmp(r->kv[i].key, key) == 0) return r->kv[i].value;
  return NULL;
}

/* 1 when key is present and a whole number, with it in *out. */
SCN_FN int scn_get_ll(const scn_record* r, const char* key, long long* out) {
  const char* v = scn_get(r, key);
  char* end;
  if (v == NULL || *v == '\0') return 0;
  *out = strtoll(v, &end, 0);
  return *end == '\0';
}

/* 1 when key holds "a/b" (both whole numbers). */
SCN_FN int scn_get_pair(const scn_record* r, const char* key, long long* a, long long* b) {
  const char* v = scn_get(r, key);
  char* end;
  if (v == NULL) return 0;
  *a = strtoll(v, &end, 0);
  if (*end != '/') return 0;
  *b = strtoll(end + 1, &end, 0);
  return *end == '\0';
}

SCN_FN int scn_count(const scn_scenario* s, const char* kind) {
  int i, n = 0;
  for (i = 0; i < s->n; ++i) n += strcmp(s->rec[i].kind, kind) == 0;
  return n;
}

/* The nth record of a kind, or NULL. */
SCN_FN const scn_record* scn_nth(const scn_scenario* s, const char* kind, int nth) {
  int i;
  for (i = 0; i < s->n; ++i)
    if (strcmp(s->rec[i].kind, kind) == 0 && nth-- == 0) return &s->rec[i];
  return NULL;
}

/* The code of a `fault fn=<fn> code=N [gpu=I]` line matching fn and gpu
 * (gpu < 0: a call about no GPU), or 0. */
SCN_FN int scn_fault(const scn_scenario* s, const char* fn, int gpu) {
  int i;
  for (i = 0; i < s->n; ++i) {
    const scn_record* r = &s->rec[i];
    const char* name = scn_get(r, "fn");
    long long code = 0, g = -1;
    if (strcmp(r->kind, "fault") != 0 || name == NULL || strcmp(name, fn) != 0) continue;
    if (scn_get_ll(r, "gpu", &g) && g != gpu) continue;
    if (scn_get_ll(r, "code", &code)) return (int)code;
  }
  return 0;
}

/* The value of a fault line's key (e.g. init=18), or 0. */
SCN_FN int scn_fault_value(const scn_scenario* s, const char* key) {
  int i;
  long long v;
  for (i = 0; i < s->n; ++i)
    if (strcmp(s->rec[i].kind, "fault") == 0 && scn_get_ll(&s->rec[i], key, &v)) return (int)v;
  return 0;
}

/* Appends a line to the trace file, if one is open. */
SCN_FN void scn_trace(FILE* trace, const char* fn) {
  if (trace == NULL) return;
  fputs(fn, trace);
  fputc('\n', trace);
  fflush(trace);
}

#endif
