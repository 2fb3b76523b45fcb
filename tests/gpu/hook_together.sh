#!/bin/bash
# On a real GPU machine: the start-up hook's parts in one job — the job's own
# speed (gpuenv_speed.py), --tune=+precision (gpuenv_precision.py) and the
# TF32 switches — on an fp32 GPT-2 loop, and what the record and the verdicts
# then say (steps/s, "tuned: bf16 autocast", GPM's figures).
#   GPUENV=./build/gpuenv tests/gpu/hook_together.sh
set -u
GPUENV=${GPUENV:-./build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
mkdir -p "$OUT"
export GPUENV_CACHE_ROOT=$(mktemp -d)
fail=0
for tune in "" "--tune=+precision"; do
  "$GPUENV" run $tune -- python3 tests/gpu/gpt_train.py --steps 60 --batch 16 --label "run${tune:+ $tune}" \
    >>"$OUT/hook_together.out" 2>>"$OUT/hook_together.err" || fail=1
done
"$GPUENV" report >>"$OUT/hook_together.out"
for id in 1 2; do "$GPUENV" report $id >>"$OUT/hook_together.out"; "$GPUENV" report $id --json >"$OUT/job$id.json"; done
grep -q "tuned: .*bf16 autocast" "$OUT/hook_together.out" || { echo "FAIL: job 2's record does not say bf16 autocast"; fail=1; }
grep -q "speed:" "$OUT/hook_together.out" || { echo "FAIL: no speed line in the report"; fail=1; }
cat "$OUT/hook_together.out"; tail -n 20 "$OUT/hook_together.err"
[ $fail = 0 ] && echo PASS || echo FAIL
