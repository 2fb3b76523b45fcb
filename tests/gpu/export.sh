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
#   SM clock 100 MHz or 10%; memory clock 1%.
set -u
GPUENV=${GPUENV:-./build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null || { echo "FAIL: no nvidia-smi"; exit 1; }

"$GPUENV" export --listen 127.0.0.1:0 --interval 1 2>"$OUT/export.err" &
pid=$!
trap 'kill $pid 2>/dev/null; [ -n "${load:-}" ] && kill $load 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$OUT/export.err" && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/export.err" | head -n1 | cut -d: -f3)
[ -n "$port" ] || { cat "$OUT/export.err"; echo "FAIL: the exporter did not start"; exit 1; }
head -n1 "$OUT/export.err"

compare() {  # $1: label (idle|load)
  sleep 2  # a fresh round
  curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/metrics-$1.txt"
  nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,clocks.sm,clocks.mem \
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
    series[(m.group(1), labels.get("uuid"))] = float(m.group(3))
MiB = 1024 * 1024
def near(a, b, abs_tol, rel_tol=0.0):
    return abs(a - b) <= max(abs_tol, rel_tol * max(abs(a), abs(b)))
rows, ok = [], True
for line in open(smi):
    f = [x.strip() for x in line.split(",")]
    idx, uuid = f[0], f[1]
    smi_v = dict(zip(["util", "used", "total", "temp", "power", "sm", "mem"], f[2:]))
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

fail=0
compare idle || fail=1
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
  sleep 4  # clocks and utilisation settle
  compare load || fail=1
  kill $load 2>/dev/null; wait $load 2>/dev/null; load=
  grep -q '^gpuenv_gpu_utilization_ratio{gpu="0",.*} 0\.[89][0-9]*$\|^gpuenv_gpu_utilization_ratio{gpu="0",.*} 1$' \
    "$OUT/metrics-load.txt" && echo "ok: GPU 0 busy under load" || { echo "FAILED: GPU 0 not busy under load"; fail=1; }
else
  echo "no torch with CUDA: the comparison under load is skipped"
fi

if command -v promtool >/dev/null; then
  promtool check metrics <"$OUT/metrics-idle.txt" && echo "ok: promtool" || { echo "FAILED: promtool"; fail=1; }
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
phases = [json.load(open(os.path.join(out, f))) for f in sorted(os.listdir(out)) if f.startswith("compare-")]
json.dump({"ok": fail == "0", "phases": phases, "scrape_p50_s": float(p50), "scrape_p99_s": float(p99),
           "cpu_percent_default_interval": float(cpu)}, open(os.path.join(out, "export.json"), "w"), indent=1)
PYEOF
[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail
