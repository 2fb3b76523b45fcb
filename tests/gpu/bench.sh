#!/bin/bash
# gpuenv bench and gpuenv check on a machine with an NVIDIA GPU, side by side
# with PyTorch measuring the same things the same way (torch_reference.py),
# for docs/performance.md. Called by tests/gpu/run.sh (make test-gpu), or
# alone. Exits non-zero when a check or a target fails. Results go to $OUT.
#   targets: bf16 GEMM and device copy >= 97 % of torch's; default bench <= 30 s.
set -u
cd "$(dirname "$0")/../.."
BIN=${GPUENV_BIN:-build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
PY=${PYTHON:-python3}
LONG_S=${GPUENV_CHECK_LONG_S:-30}
export GPUENV_CACHE_ROOT=${GPUENV_CACHE_ROOT:-$OUT/cache}
mkdir -p "$OUT"
fail=0
check() { if "$@"; then echo "ok: $*"; else echo "FAILED: $*"; fail=1; fi; }
export PYTHONUNBUFFERED=1

# cuBLASLt: the toolkit's, else the copy PyTorch's wheels bring.
if [ -z "${GPUENV_CUBLASLT_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt.so.13 ' &&
   [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  lt=$($PY -c 'import glob, site; print(next(iter(sorted(glob.glob(site.getsitepackages()[0] + "/nvidia/**/libcublasLt.so.13", recursive=True))), ""))' 2>/dev/null)
  [ -n "$lt" ] && export GPUENV_CUBLASLT_LIBRARY=$lt
fi

echo "== torch reference, before"
$PY tests/gpu/torch_reference.py > "$OUT/torch_before.json"; cat "$OUT/torch_before.json"

echo "== gpuenv bench (default cases), timed"
start=$(date +%s.%N)
$BIN bench > "$OUT/bench.txt"; bench_rc=$?
end=$(date +%s.%N)
cat "$OUT/bench.txt"
echo "$start $end" > "$OUT/bench_wall.txt"
check test "$bench_rc" -eq 0
$BIN bench --history --json > "$OUT/history.json"

echo "== torch reference, after"
$PY tests/gpu/torch_reference.py > "$OUT/torch_after.json"; cat "$OUT/torch_after.json"

echo "== gpuenv against torch"
check $PY - "$OUT" <<'PYEOF'
import json, sys
out = sys.argv[1]
hist = json.load(open(f"{out}/history.json"))["measurements"]
last = max(m["run_id"] for m in hist)
ours = {m["key"]: m["value"] for m in hist if m["run_id"] == last and m["value"] is not None}
torch = [json.load(open(f"{out}/torch_{w}.json")) for w in ("before", "after")]
start, end = map(float, open(f"{out}/bench_wall.txt").read().split())
rows = [("gemm_bf16_8192", "tflops", "TFLOP/s"), ("gemm_tf32_8192", "tflops", "TFLOP/s"),
        ("gemm_bf16_4096", "tflops", "TFLOP/s"), ("memcpy_d2d", "gbps", "GB/s")]
ok = True
print(f"{'case':<16} {'gpuenv':>10} {'torch':>16} {'ratio':>7}")
for key, field, unit in rows:
    ref = max(t[key][field] for t in torch)
    mine = ours.get(key)
    if key == "memcpy_d2d":
        mine = max(ours.get("memcpy_d2d", 0), ours.get("copy_kernel", 0))
    ratio = mine / ref * 100 if mine else 0
    need = key in ("gemm_bf16_8192", "memcpy_d2d")
    flag = "" if not need else ("ok" if ratio >= 97 else "BELOW 97 %")
    ok &= not need or ratio >= 97
    print(f"{key:<16} {mine:>10.1f} {ref:>10.1f} {unit:<5} {ratio:>6.1f}% {flag}")
wall = end - start
print(f"default bench wall time {wall:.1f} s (target <= 30 s)")
ok &= wall <= 30
sys.exit(0 if ok else 1)
PYEOF

echo "== gpuenv check --quick"
$BIN check | tee "$OUT/check_quick.txt"; check test "${PIPESTATUS[0]}" -eq 0
echo "== gpuenv check --long --duration $LONG_S"
$BIN check --long --duration "$LONG_S" --json > "$OUT/check_long.json"; rc=$?
$PY -c 'import json,sys; j=json.load(open(sys.argv[1])); [print(c["verdict"].upper(), c["name"], c["message"]) for c in j["checks"]]; print("passed" if j["passed"] else "FAILED", round(j["seconds"],1), "s")' "$OUT/check_long.json"
check test "$rc" -eq 0
echo "== gpuenv bench --history"
$BIN bench --history | tail -20
exit $fail
