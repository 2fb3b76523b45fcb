#!/bin/bash
# On an H200 (or any Hopper+): NVML GPM through gpuenv against pynvml, and
# the fp32-on-cuda-cores verdict of `gpuenv run` on a real fp32 loop.
#   GPUENV=build/gpuenv PROBE=build/tests/gpuenv_gpm_probe tests/gpu/gpm.sh
# 1. tests/gpu/gpm.py: bf16 and fp32 (TF32 off) 8192^2 matmul loops, each
#    ratio of gpuenv's sampler within 0.05 of pynvml's.
# 2. tests/gpu/gpm_gpt_highest.py (GPT-2 small, fp32, precision "highest")
#    under `gpuenv run`: its verdict must be fp32-on-cuda-cores.
# Results in $OUT (gpm.json, gpt.json, gpt-report.json). Exit 1 on a failure.
set -u
cd "$(dirname "$0")/../.."
GPUENV=${GPUENV:-build/gpuenv}
PROBE=${PROBE:-build/tests/gpuenv_gpm_probe}
OUT=${OUT:-/tmp/gpuenv-gpu}
GPT_STEPS=${GPT_STEPS:-150}  # 0: the GPM comparison only
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
fail=0
python3 tests/gpu/gpm.py --probe "$PROBE" >"$OUT/gpm.json" || fail=1
cat "$OUT/gpm.json"
[ "$GPT_STEPS" = 0 ] && { [ $fail = 0 ] && echo PASS || echo FAIL; exit $fail; }
export GPUENV_CACHE_ROOT=$OUT/cache
"$GPUENV" run -- python3 tests/gpu/gpm_gpt_highest.py --steps "$GPT_STEPS" >"$OUT/gpt.json" 2>"$OUT/gpt.err" || fail=1
cat "$OUT/gpt.json" "$OUT/gpt.err"
"$GPUENV" report --json 1 >"$OUT/gpt-report.json" || fail=1
python3 - "$OUT/gpt-report.json" <<'PYEOF' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
v = j["verdict"]
pts = j["timeline"]["points"]
def m(k):
    xs = [p[k][1] for p in pts if k in p]
    return round(sum(xs) / len(xs), 1) if xs else None
print(json.dumps({"verdict": v["name"], "evidence": v["evidence"], "fix": v["fix"],
                  "util_pct": m("util_pct"), "sm_active_pct": m("sm_active_pct"),
                  "tensor_active_pct": m("tensor_active_pct"), "fp32_active_pct": m("fp32_active_pct")}))
sys.exit(0 if v["name"] == "fp32-on-cuda-cores" else 1)
PYEOF
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
