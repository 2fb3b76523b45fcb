#!/bin/bash
# On a real GPU machine: what the fleet and health work reads from the real
# driver. detect exits 0 on a healthy driver; doctor's default and nagios
# codes agree; `labels` agrees with nvidia-smi; `check` passes a healthy GPU;
# `run` applies the plan with no warning line for a healthy machine.
#   tests/gpu/fleet.sh [BIN]
set -u
BIN=${1:-build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
fail=0
check() { if "$@"; then echo "ok: $*"; else echo "FAILED: $*"; fail=1; fi; }

$BIN detect >"$OUT/detect.txt" 2>"$OUT/detect.err"
check test $? -eq 0
check test ! -s "$OUT/detect.err"

$BIN doctor >"$OUT/doctor-fleet.txt" 2>&1
code=$?
$BIN doctor --exit-codes nagios >/dev/null 2>&1
nagios=$?
head -n 1 "$OUT/doctor-fleet.txt"
grep -E '^  (error|warning)' "$OUT/doctor-fleet.txt"
echo "doctor exit $code, nagios $nagios"
case $code in 0) want=0 ;; 4) want=1 ;; 1) want=2 ;; *) want=3 ;; esac
check test "$nagios" -eq "$want"
check test "$code" -ne 1  # a healthy H200: no error (the clock rules must not call an idle GPU sick)

$BIN labels --once --output "$OUT/labels.txt"
check test $? -eq 0
cat "$OUT/labels.txt"
check python3 - "$OUT/labels.txt" <<'PYEOF'
import subprocess, sys
labels = dict(l.strip().split("=", 1) for l in open(sys.argv[1]) if l.strip() and not l.startswith("#"))
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,compute_cap,driver_version",
                      "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout.splitlines()
name, mem, cc, driver = [x.strip() for x in smi[0].split(",")]
want = {"gpuenv.dev/gpu.count": str(len(smi)), "gpuenv.dev/gpu.product": name.replace(" ", "-"),
        "gpuenv.dev/gpu.memory": mem, "gpuenv.dev/gpu.compute.major": cc.split(".")[0],
        "gpuenv.dev/gpu.compute.minor": cc.split(".")[1], "gpuenv.dev/driver.major": driver.split(".")[0]}
bad = {k: (labels.get(k), v) for k, v in want.items() if labels.get(k) != v}
assert not bad, bad
print("labels agree with nvidia-smi:", want)
PYEOF

$BIN run -- true 2>"$OUT/run.err"
check test $? -eq 0
# Nothing on stderr but the watched job's own line ("gpuenv: job 2: too-short (gpuenv report 2)"):
# no warning about the machine or the plan.
check test -z "$(grep -Ev '^gpuenv: job [0-9]+: [a-z0-9-]+ \(gpuenv report [0-9]+\)$' "$OUT/run.err")"

if $BIN check >"$OUT/check.txt" 2>&1; then echo "ok: gpuenv check"; else echo "FAILED: gpuenv check"; fail=1; fi
tail -n 15 "$OUT/check.txt"
exit $fail
