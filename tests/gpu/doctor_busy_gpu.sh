#!/bin/bash
# doctor's memory_in_use on a real GPU: ok while GPU 0 is idle, a warning (exit 4) while another
# process holds 50 GiB of it. Usage: tests/gpu/doctor_busy_gpu.sh build/gpuenv
set -u
B=${1:-build/gpuenv}; PY=${PYTHON:-python3}
status() {  # memory_in_use's status in doctor --json, and its text
  $B doctor --json | $PY -c 'import json,sys
f = [x for x in json.load(sys.stdin)["findings"] if x["check"] == "memory_in_use"]
print(f[0]["status"], "-", f[0]["seen"]) if f else print("none")'
}
idle=$(status); echo "idle: $idle"
case "$idle" in ok*) ;; *) echo "FAILED: memory_in_use is not ok on the idle GPU"; exit 1;; esac
ready=$(mktemp -u)
$PY -c 'import sys,time,torch; x=torch.empty(50<<30, dtype=torch.uint8, device="cuda:0"); open(sys.argv[1],"w").close(); time.sleep(120)' "$ready" &
holder=$!
trap 'kill $holder 2>/dev/null' EXIT
for _ in $(seq 120); do [ -f "$ready" ] && break; sleep 0.5; done
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader
busy=$(status); echo "busy: $busy"
case "$busy" in warning*) ;; *) echo "FAILED: memory_in_use does not warn"; exit 1;; esac
$B doctor > /dev/null; code=$?
[ $code -eq 4 ] || { echo "FAILED: doctor exited $code, not 4"; exit 1; }
echo "ok: memory_in_use warns while another process holds GPU 0's memory"
