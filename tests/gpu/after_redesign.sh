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
tail -n 30 "$OUT/detect.txt"; tail -n 20 "$OUT/doctor.txt"; tail -n 8 "$OUT/export.txt"
echo "--- ddp stdout"; cat "$OUT/ddp.out"; echo "--- ddp stderr (tail)"; tail -n 15 "$OUT/ddp.err"
[ $fail = 0 ] && echo PASS || echo FAIL
