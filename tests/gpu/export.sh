#!/bin/bash
# On a real GPU machine: `gpuenv export` against nvidia-smi. Starts the
# exporter (NVML read every second), scrapes /metrics, and compares each
# GPU's utilisation, memory used/total, temperature, power and clocks with
# `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` read at the same
# moment; first idle, then (when python3 can import torch) with a matmul loop
# on GPU 0. Also: promtool accepts the scrape (when installed), a scrape's
# latency, and the exporter's CPU use at the default interval (5 s).
#   GPUENV=./build/gpuenv tests/gpu/export.sh
# Prints PASS or FAIL, and a JSON summary in $OUT/export.json.
#
# Tolerances (the two readings are up to a second apart, and NVML samples
# utilisation and power over its own window):
#   memory.total exact (to the MiB); memory.used 64 MiB or 2%;
#   temperature 3 C; power 25 W or 15%; utilisation 10 points;
#   SM clock 100 MHz or 10% while no reason holds the clocks back; under a
#   power cap or slowdown, compared through the clock-event mask (the exporter
#   names the same reason, its clock at most the maximum): the clock moves by
#   more than any tolerance between two readings a second apart); memory clock 1%.
# NVLink (compare_nvlink): each GPU's data counters, summed over its links by
# `nvidia-smi nvlink -gt d`, against gpuenv_gpu_nvlink_data_bytes_total (1 MiB
# or 1%), and DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL against nvidia-smi's growth
# over the same seconds (KiB/s / 1000, 1 or 20%); on a GPU without NVLink
# both series are absent.
# dcgm-exporter's names (DCGM_FI_DEV_*) the same way, against every
# nvidia-smi field this driver has of the list in compare_dcgm: the above,
# plus memory free, memory temperature 3 C, the volatile ECC counts, the
# remapped rows and their pending/failure flags exactly, the clock-event mask
# exactly but for gpu_idle and sw_power_cap (NVML reads them per call), and
# the labels (UUID, pci_bus_id, modelName, device=/dev/nvidiaN,
# DCGM_FI_DRIVER_VERSION). Several of those fields (FB_TOTAL, the volatile ECC
# counts, ROW_REMAP_PENDING, CLOCKS_EVENT_REASONS) are not among
# dcgm-exporter's default counters, so the exporter runs with a counters file
# (-f, $OUT/export-counters.csv) listing every DCGM field compared here.
# The scrape latency and CPU at the end are the default set's (no -f).
set -u
GPUENV=${GPUENV:-./build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null || { echo "FAIL: no nvidia-smi"; exit 1; }

# dcgm-exporter's counters CSV (FIELD, TYPE, HELP): compare_dcgm's fields,
# compare_nvlink's bandwidth, the Xid and the driver-version label.
cat >"$OUT/export-counters.csv" <<'CSV'
# The DCGM fields tests/gpu/export.sh compares with nvidia-smi.
DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).
DCGM_FI_DEV_MEM_COPY_UTIL, gauge, Memory utilization (in %).
DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).
DCGM_FI_DEV_FB_FREE, gauge, Framebuffer memory free (in MiB).
DCGM_FI_DEV_FB_TOTAL, gauge, Framebuffer memory total (in MiB).
DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).
DCGM_FI_DEV_MEMORY_TEMP, gauge, Memory temperature (in C).
DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).
DCGM_FI_DEV_SM_CLOCK, gauge, SM clock frequency (in MHz).
DCGM_FI_DEV_MEM_CLOCK, gauge, Memory clock frequency (in MHz).
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL, counter, Total number of single-bit volatile ECC errors.
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, Total number of double-bit volatile ECC errors.
DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for correctable errors
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for uncorrectable errors
DCGM_FI_DEV_ROW_REMAP_PENDING, gauge, Whether a row remapping waits for a GPU reset
DCGM_FI_DEV_ROW_REMAP_FAILURE, gauge, Whether remapping of rows has failed
DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge, Current clock event reasons (bitmask of nvmlClocksEventReasons)
DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, counter, Total number of NVLink bandwidth counters for all lanes.
DCGM_FI_DRIVER_VERSION, label, Driver Version
CSV

"$GPUENV" export --listen 127.0.0.1:0 --interval 1 -f "$OUT/export-counters.csv" 2>"$OUT/export.err" &
pid=$!
trap 'kill $pid 2>/dev/null; [ -n "${load:-}" ] && kill $load 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$OUT/export.err" && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/export.err" | head -n1 | cut -d: -f3)
[ -n "$port" ] || { cat "$OUT/export.err"; echo "FAIL: the exporter did not start"; exit 1; }
head -n1 "$OUT/export.err"

compare() {  # $1: label (idle|load)
  sleep 2  # a fresh round
  curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/metrics-$1.txt"
  nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,clocks.sm,clocks.mem,clocks_event_reasons.active,clocks.max.sm \
    --format=csv,noheader,nounits >"$OUT/smi-$1.csv"
  python3 - "$1" "$OUT/metrics-$1.txt" "$OUT/smi-$1.csv" "$OUT/compare-$1.json" <<'PYEOF'
import json, re, sys
label, metrics, smi, out = sys.argv[1:]
series = {}
for line in open(metrics):
    m = re.match(r'(gpuenv_gpu_\w+)\{([^}]*)\} (\S+)$', line.strip())
    if not m or 'mig="' in m.group(2):
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    key = (m.group(1), labels.get("uuid")) + ((labels["reason"],) if "reason" in labels else ())
    series[key] = float(m.group(3))
MiB = 1024 * 1024
def near(a, b, abs_tol, rel_tol=0.0):
    return abs(a - b) <= max(abs_tol, rel_tol * max(abs(a), abs(b)))
rows, ok = [], True
for line in open(smi):
    f = [x.strip() for x in line.split(",")]
    idx, uuid = f[0], f[1]
    smi_v = dict(zip(["util", "used", "total", "temp", "power", "sm", "mem", "events", "max_sm"], f[2:]))
    # The SM clock through the clock-event mask: where neither side holds the
    # clocks back, the two readings agree (100 MHz or 10 %); where a reason that
    # moves the clock holds (power cap, slowdowns), the exporter must report that
    # same reason, and its clock must lie between the idle floor and the maximum:
    # at the cap the clock moves by hundreds of MHz within the second between the
    # two readings, so their difference says nothing.
    MOVERS = {"sw_power_cap": 0x4, "hw_slowdown": 0x8, "sw_thermal_slowdown": 0x20,
              "hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80}
    smi_events = int(smi_v["events"], 16) if smi_v["events"].startswith("0x") else 0
    exp_events = {r for r in MOVERS if series.get(("gpuenv_gpu_clock_event_active", uuid, r)) == 1.0}
    smi_movers = {r for r, bit in MOVERS.items() if smi_events & bit}
    capped = bool(smi_movers or exp_events)
    checks = [  # (what, exporter series, scale to nvidia-smi's unit, abs tolerance, rel tolerance)
        ("util", "gpuenv_gpu_utilization_ratio", 100, 10, 0),
        ("used", "gpuenv_gpu_memory_used_bytes", 1 / MiB, 64, 0.02),
        ("total", "gpuenv_gpu_memory_total_bytes", 1 / MiB, 1, 0),
        ("temp", "gpuenv_gpu_temperature_celsius", 1, 3, 0),
        ("power", "gpuenv_gpu_power_watts", 1, 25, 0.15),
        ("sm", "gpuenv_gpu_sm_clock_hertz", 1e-6, 100, 0.10),
        ("mem", "gpuenv_gpu_memory_clock_hertz", 1e-6, 0, 0.01),
    ]
    up = series.get(("gpuenv_gpu_up", uuid))
    for what, name, scale, abs_tol, rel_tol in checks:
        s = smi_v[what]
        e = series.get((name, uuid))
        if s in ("[N/A]", "[Not Supported]", "N/A"):
            good = e is None  # unknown to both
            rows.append({"gpu": idx, "what": what, "nvidia_smi": s, "exporter": e, "ok": good})
        elif what == "sm" and capped:
            good = e is not None and bool(smi_movers & exp_events) and 0 < e * scale <= float(smi_v["max_sm"])
            rows.append({"gpu": idx, "what": what, "nvidia_smi": float(s),
                         "exporter": None if e is None else round(e * scale, 3), "ok": good,
                         "through_mask": {"nvidia_smi": sorted(smi_movers), "exporter": sorted(exp_events)}})
        else:
            good = e is not None and near(e * scale, float(s), abs_tol, rel_tol)
            rows.append({"gpu": idx, "what": what, "nvidia_smi": float(s),
                         "exporter": None if e is None else round(e * scale, 3), "ok": good})
        ok = ok and good
        print(f"{label} GPU {idx} {what:5} nvidia-smi {s:>10}  exporter {rows[-1]['exporter']!s:>12}  "
              f"{'ok' if good else 'MISMATCH'}")
    ok = ok and up == 1.0
json.dump({"phase": label, "ok": ok, "rows": rows}, open(out, "w"), indent=1)
sys.exit(0 if ok else 1)
PYEOF
}

compare_dcgm() {  # $1: label; reads $OUT/metrics-$1.txt
  local fields="index,uuid,pci.bus_id,name,driver_version,utilization.gpu,utilization.memory,memory.used,memory.free,memory.total,temperature.gpu,temperature.memory,power.draw,clocks.sm,clocks.mem,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,clocks_event_reasons.active"
  local have=""  # the fields this nvidia-smi knows
  local help; help=$(nvidia-smi --help-query-gpu)
  for f in ${fields//,/ }; do grep -q "\"$f\"" <<<"$help" && have="$have,$f"; done
  nvidia-smi --query-gpu="${have#,}" --format=csv,noheader,nounits >"$OUT/smi-dcgm-$1.csv"
  python3 - "$1" "$OUT/metrics-$1.txt" "$OUT/smi-dcgm-$1.csv" "${have#,}" "$OUT/compare-dcgm-$1.json" <<'PYEOF'
import json, os, re, sys
label, metrics, smi, names, out = sys.argv[1:]
names = names.split(",")
def held_back(f):  # power cap, slowdowns: reasons that move the SM clock within a second
    v = f.get("clocks_event_reasons.active", "")
    return v.startswith("0x") and int(v, 16) & 0xEC != 0
series, labels_of = {}, {}
for line in open(metrics):
    m = re.match(r'(DCGM_FI_DEV_\w+)\{([^}]*)\} (\S+)$', line.strip())
    if not m or "GPU_I_ID=" in m.group(2):
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    series[(m.group(1), labels.get("UUID"))] = float(m.group(3))
    labels_of[labels.get("UUID")] = labels
def near(a, b, abs_tol, rel_tol=0.0):
    return abs(a - b) <= max(abs_tol, rel_tol * max(abs(a), abs(b)))
FLICKER = 0x1 | 0x4  # gpu_idle, sw_power_cap
checks = [  # (nvidia-smi field, DCGM series, compare)
    ("utilization.gpu", "DCGM_FI_DEV_GPU_UTIL", lambda e, s: near(e, s, 10)),
    ("utilization.memory", "DCGM_FI_DEV_MEM_COPY_UTIL", lambda e, s: near(e, s, 10)),
    ("memory.used", "DCGM_FI_DEV_FB_USED", lambda e, s: near(e, s, 64, 0.02)),
    ("memory.free", "DCGM_FI_DEV_FB_FREE", lambda e, s: near(e, s, 64, 0.02)),
    ("memory.total", "DCGM_FI_DEV_FB_TOTAL", lambda e, s: near(e, s, 1)),
    ("temperature.gpu", "DCGM_FI_DEV_GPU_TEMP", lambda e, s: near(e, s, 3)),
    ("temperature.memory", "DCGM_FI_DEV_MEMORY_TEMP", lambda e, s: near(e, s, 3)),
    ("power.draw", "DCGM_FI_DEV_POWER_USAGE", lambda e, s: near(e, s, 25, 0.15)),
    ("clocks.sm", "DCGM_FI_DEV_SM_CLOCK", lambda e, s: near(e, s, 100, 0.10) or
     held_back(f)),  # held back: the clocks_event_reasons row below decides
    ("clocks.mem", "DCGM_FI_DEV_MEM_CLOCK", lambda e, s: near(e, s, 0, 0.01)),
    ("ecc.errors.corrected.volatile.total", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", lambda e, s: e == s),
    ("ecc.errors.uncorrected.volatile.total", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", lambda e, s: e == s),
    ("remapped_rows.correctable", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", lambda e, s: e == s),
    ("remapped_rows.uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", lambda e, s: e == s),
    ("remapped_rows.pending", "DCGM_FI_DEV_ROW_REMAP_PENDING", lambda e, s: e == s),
    ("remapped_rows.failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", lambda e, s: e == s),
    ("clocks_event_reasons.active", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
     lambda e, s: int(e) & ~FLICKER == int(s) & ~FLICKER),
]
def number(v):
    if v in ("Yes", "No"):
        return 1.0 if v == "Yes" else 0.0
    return float(int(v, 16)) if v.startswith("0x") else float(v)
rows, ok = [], True
for line in open(smi):
    f = dict(zip(names, [x.strip() for x in line.split(",")]))
    uuid = f["uuid"]
    for field, name, same in checks:
        if field not in f:
            continue
        s, e = f[field], series.get((name, uuid))
        if s in ("[N/A]", "[Not Supported]", "N/A"):
            good = e is None
        else:
            good = e is not None and same(e, number(s))
        rows.append({"gpu": f["index"], "series": name, "nvidia_smi": s, "exporter": e, "ok": good})
        ok = ok and good
        print(f"{label} GPU {f['index']} {name:40} nvidia-smi {s:>10}  exporter {e!s:>14}  {'ok' if good else 'MISMATCH'}")
    l = labels_of.get(uuid, {})
    want = {"pci_bus_id": f.get("pci.bus_id"), "modelName": f.get("name"),
            "DCGM_FI_DRIVER_VERSION": f.get("driver_version")}
    for k, v in want.items():
        good = v is None or l.get(k) == v
        rows.append({"gpu": f["index"], "label": k, "nvidia_smi": v, "exporter": l.get(k), "ok": good})
        ok = ok and good
        print(f"{label} GPU {f['index']} label {k:34} nvidia-smi {v!s:>18}  exporter {l.get(k)!s:>18}  {'ok' if good else 'MISMATCH'}")
    dev = l.get("device", "")
    good = bool(re.fullmatch(r"nvidia\d+", dev)) and os.path.exists("/dev/" + dev)
    rows.append({"gpu": f["index"], "label": "device", "exporter": dev, "ok": good})
    ok = ok and good
    print(f"{label} GPU {f['index']} label device: {dev} {'exists' if good else 'MISSING'}")
    xid = series.get(("DCGM_FI_DEV_XID_ERRORS", uuid))
    rows.append({"gpu": f["index"], "series": "DCGM_FI_DEV_XID_ERRORS", "exporter": xid, "ok": xid is not None})
    ok = ok and xid is not None
    print(f"{label} GPU {f['index']} DCGM_FI_DEV_XID_ERRORS {xid} (the last Xid since the exporter started)")
json.dump({"phase": label, "ok": ok, "rows": rows}, open(out, "w"), indent=1)
sys.exit(0 if ok else 1)
PYEOF
}

nvlink_kib() {  # nvidia-smi's NVLink data counters: "UUID TX_KIB RX_KIB" per GPU with links
  nvidia-smi nvlink -gt d 2>/dev/null | python3 -c '
import re, sys
gpus = {}
uuid = None
for line in sys.stdin:
    m = re.match(r"GPU \d+: .*\(UUID: (GPU-[^)]+)\)", line.strip())
    if m:
        uuid = m.group(1)
        continue
    m = re.search(r"Link \d+: Data (Tx|Rx): (\d+) KiB", line)
    if m and uuid:
        t = gpus.setdefault(uuid, [0, 0])
        t[0 if m.group(1) == "Tx" else 1] += int(m.group(2))
for u, (tx, rx) in gpus.items():
    print(u, tx, rx)
'
}

compare_nvlink() {  # $1: label
  nvlink_kib >"$OUT/nvlink-a-$1.txt"; local t0; t0=$(date +%s.%N)
  sleep 3
  curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/metrics-nvlink-$1.txt"
  nvlink_kib >"$OUT/nvlink-b-$1.txt"; local t1; t1=$(date +%s.%N)
  nvidia-smi --query-gpu=index,uuid --format=csv,noheader >"$OUT/uuids.csv"
  python3 - "$1" "$OUT/metrics-nvlink-$1.txt" "$OUT/nvlink-a-$1.txt" "$OUT/nvlink-b-$1.txt" "$t0" "$t1" \
    "$OUT/uuids.csv" "$OUT/compare-nvlink-$1.json" <<'PYEOF'
import json, re, sys
label, metrics, a, b, t0, t1, uuids, out = sys.argv[1:]
def counters(path):
    return {u: (int(tx), int(rx)) for u, tx, rx in (l.split() for l in open(path) if l.strip())}
before, after = counters(a), counters(b)
series = {}
for line in open(metrics):
    m = re.match(r'(gpuenv_gpu_nvlink_data_bytes_total|DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL)\{([^}]*)\} (\S+)$', line.strip())
    if m:
        l = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        series[(m.group(1), l.get("uuid") or l.get("UUID"), l.get("direction"))] = float(m.group(3))
def near(x, y, abs_tol, rel_tol):
    return abs(x - y) <= max(abs_tol, rel_tol * max(abs(x), abs(y)))
rows, ok = [], True
for line in open(uuids):
    idx, uuid = [x.strip() for x in line.split(",")]
    tx = series.get(("gpuenv_gpu_nvlink_data_bytes_total", uuid, "tx"))
    rx = series.get(("gpuenv_gpu_nvlink_data_bytes_total", uuid, "rx"))
    bw = series.get(("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", uuid, None))
    if uuid not in after:
        good = tx is None and rx is None and bw is None
        rows.append({"gpu": idx, "nvlink": False, "exporter": [tx, rx, bw], "ok": good})
        print(f"{label} GPU {idx} no NVLink counters in nvidia-smi; exporter {tx} {rx} {bw} {'ok' if good else 'MISMATCH'}")
    else:
        (tx_a, rx_a), (tx_b, rx_b) = before.get(uuid, after[uuid]), after[uuid]
        smi_bw = ((tx_b + rx_b) - (tx_a + rx_a)) / (float(t1) - float(t0)) / 1000
        good = (tx is not None and near(tx / 1024, tx_b, 1024, 0.01) and rx is not None and
                near(rx / 1024, rx_b, 1024, 0.01) and bw is not None and near(bw, smi_bw, 1, 0.20))
        rows.append({"gpu": idx, "nvlink": True, "nvidia_smi_kib": [tx_b, rx_b], "nvidia_smi_bw": round(smi_bw, 1),
                     "exporter_kib": [None if tx is None else tx / 1024, None if rx is None else rx / 1024],
                     "exporter_bw": bw, "ok": good})
        print(f"{label} GPU {idx} NVLink KiB tx/rx nvidia-smi {tx_b}/{rx_b} exporter "
              f"{None if tx is None else tx / 1024}/{None if rx is None else rx / 1024}; DCGM bandwidth "
              f"nvidia-smi {smi_bw:.1f} exporter {bw} {'ok' if good else 'MISMATCH'}")
    ok = ok and good
json.dump({"phase": "nvlink-" + label, "ok": ok, "rows": rows}, open(out, "w"), indent=1)
sys.exit(0 if ok else 1)
PYEOF
}

fail=0
compare idle || fail=1
compare_nvlink idle || fail=1
compare_dcgm idle || fail=1
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 -c '
import torch, time
a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
end = time.time() + 15
while time.time() < end:
    for _ in range(20): a @ a
    torch.cuda.synchronize()
' &
  load=$!
  # The load is on once nvidia-smi sees GPU 0 busy (importing torch on a cold
  # machine takes seconds); then compare's own 2 s give the exporter a round.
  for _ in $(seq 60); do
    u=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 | tr -d ' ')
    [ "${u:-0}" -ge 90 ] 2>/dev/null && break
    sleep 1
  done
  compare load || fail=1
  compare_dcgm load || fail=1
  kill $load 2>/dev/null; wait $load 2>/dev/null; load=
  grep -q '^gpuenv_gpu_utilization_ratio{gpu="0",.*} 0\.[89][0-9]*$\|^gpuenv_gpu_utilization_ratio{gpu="0",.*} 1$' \
    "$OUT/metrics-load.txt" && echo "ok: GPU 0 busy under load" || { echo "FAILED: GPU 0 not busy under load"; fail=1; }
else
  echo "no torch with CUDA: the comparison under load is skipped"
fi

if command -v promtool >/dev/null; then
  # gpuenv's own names pass promtool's lint; dcgm-exporter's draw its naming
  # lints (camelCase labels, counters without _total) and must parse.
  grep -v 'DCGM_FI_' "$OUT/metrics-idle.txt" | promtool check metrics && echo "ok: promtool (gpuenv's names)" || { echo "FAILED: promtool"; fail=1; }
  promtool check metrics <"$OUT/metrics-idle.txt" >"$OUT/promtool-dcgm.txt" 2>&1
  if grep -v -E "^DCGM_FI_[A-Z_]+ (label names should be written in 'snake_case' not 'camelCase'|counter metrics should have \"_total\" suffix|metric name should not include type 'counter')\$" "$OUT/promtool-dcgm.txt" | grep -q .; then
    echo "FAILED: promtool on the DCGM names:"; cat "$OUT/promtool-dcgm.txt"; fail=1
  else echo "ok: promtool parses the DCGM names"; fi
fi

# Latency of 200 scrapes (curl's total time) and CPU at the default interval.
kill $pid; wait $pid
echo "exporter exit status on SIGTERM: $?"
"$GPUENV" export --listen 127.0.0.1:0 2>"$OUT/export-default.err" &
pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$OUT/export-default.err" && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/export-default.err" | head -n1 | cut -d: -f3)
for _ in $(seq 200); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"; done | sort -n >"$OUT/latency.txt"
p50=$(sed -n 100p "$OUT/latency.txt"); p99=$(sed -n 198p "$OUT/latency.txt")
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks); sleep 30; t1=$(ticks)
cpu=$(awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", 100 * d / hz / 30 }')
echo "200 scrapes: p50 ${p50}s, p99 ${p99}s; CPU at the default 5 s interval: ${cpu}% of one core over 30 s"
python3 - "$OUT" "$fail" "$p50" "$p99" "$cpu" <<'PYEOF'
import json, os, sys
out, fail, p50, p99, cpu = sys.argv[1:]
phases = [json.load(open(os.path.join(out, f))) for f in sorted(os.listdir(out)) if f.startswith("compare-")
          and f.endswith(".json")]
json.dump({"ok": fail == "0", "phases": phases, "scrape_p50_s": float(p50), "scrape_p99_s": float(p99),
           "cpu_percent_default_interval": float(cpu)}, open(os.path.join(out, "export.json"), "w"), indent=1)
PYEOF
[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail
