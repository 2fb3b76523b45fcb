#!/bin/bash
# On a real GPU machine, after issue 22's redesign: the figures it must leave
# unchanged within noise, in one run — detect and env against nvidia-smi
# (time_detect.py), doctor against importing torch (time_doctor.py), export's
# readings and scrape latency against nvidia-smi (export.sh) — and DDP under
# torchrun with --tune=+precision (one rank per GPU on the GPUs there are):
# each rank's gpuenv puts the hook in its own Python, rank 0 alone speaks.
#   GPUENV=./build/gpuenv tests/gpu/after_redesign.sh
set -u
GPUENV=${GPUENV:-./build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
fail=0
python3 tests/gpu/time_detect.py "$GPUENV" 60 >"$OUT/detect.txt" 2>&1 || fail=1
python3 tests/gpu/time_doctor.py "$GPUENV" python3 >"$OUT/doctor.txt" 2>&1 || fail=1
GPUENV=$GPUENV OUT=$OUT bash tests/gpu/export.sh >"$OUT/export.txt" 2>&1 || fail=1
n=$(nvidia-smi -L | wc -l)
export GPUENV_CACHE_ROOT=$(mktemp -d)
torchrun --standalone --nproc-per-node="$n" --no-python "$GPUENV" run --tune=+precision -- \
  python3 tests/gpu/ddp_train.py --steps 30 >"$OUT/ddp.out" 2>"$OUT/ddp.err" || { echo "FAIL: DDP run"; fail=1; }
grep -c "bf16 autocast" "$OUT/ddp.err" >"$OUT/ddp.hooklines"
# The NVML sampler's other two users: check --long's watcher (clocks,
# temperature, power, ECC before and after) and run's job watcher (a busy
# fp32 GPT-2 loop: its verdict and GPU samples in `report --json`).
"$GPUENV" check --long --duration 10 --json >"$OUT/check.json" 2>"$OUT/check.err" || { echo "FAIL: check --long"; fail=1; }
python3 - "$OUT/check.json" <<'PYEOF' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
w = j["watch"]
print("check --long:", "passed" if j["passed"] else "FAILED", "| watch:", json.dumps(w))
assert j["passed"] and w and all(g["samples"] > 5 and g["sm_mhz_max"] and g["power_max_w"] for g in w), "watch empty"
PYEOF
export GPUENV_CACHE_ROOT=$(mktemp -d)  # a fresh store: this run is its one job
"$GPUENV" run -- python3 tests/gpu/gpt_train.py --steps 150 --batch 16 --label watched >"$OUT/run.out" 2>"$OUT/run.err" \
  || { echo "FAIL: gpuenv run"; fail=1; }
tail -n 1 "$OUT/run.out"
"$GPUENV" report --json >"$OUT/report.json" 2>>"$OUT/run.err" || { echo "FAIL: report"; fail=1; }
python3 - "$OUT/report.json" <<'PYEOF' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["verdict"]
print("run's verdict:", v["name"], json.dumps(v.get("figures", {})))
assert v["name"] == "busy" and v["figures"].get("util_pct", 0) > 80, "the watcher saw no busy GPU"
PYEOF
tail -n 30 "$OUT/detect.txt"; tail -n 20 "$OUT/doctor.txt"; grep -v ' ok$' "$OUT/export.txt" | tail -n 20
echo "--- ddp stdout"; cat "$OUT/ddp.out"; echo "--- ddp stderr (tail)"; tail -n 15 "$OUT/ddp.err"
[ $fail = 0 ] && echo PASS || echo FAIL
