#!/bin/bash
# On a real GPU machine: what watching costs a busy job. The same fp32 GPT-2
# loop (TF32 on through the plan either way) under `gpuenv run --no-watch`
# (exec, no watcher, no hook's speed file) and `gpuenv run` (the watcher
# sampling NVML and NVML GPM every second, the hook counting steps),
# alternated ROUNDS times; tokens/s is the script's own.
#   GPUENV=./build/gpuenv ROUNDS=2 STEPS=150 tests/gpu/watch_cost.sh
set -u
GPUENV=${GPUENV:-./build/gpuenv}
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-150}
export GPUENV_CACHE_ROOT=$(mktemp -d)
for r in $(seq "$ROUNDS"); do
  for mode in --no-watch ""; do
    "$GPUENV" run $mode -- python3 tests/gpu/gpt_train.py --steps "$STEPS" --batch 16 --label "$([ -n "$mode" ] && echo unwatched || echo watched)" 2>/dev/null |
      python3 -c 'import json,sys; j=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(j["label"], round(j["tokens_per_s"]))'
  done
done | awk '{print; s[$1]+=$2; n[$1]++} END {u=s["unwatched"]/n["unwatched"]; w=s["watched"]/n["watched"];
  printf "mean tokens/s: unwatched %.0f, watched %.0f, cost %.2f%%\n", u, w, 100*(u-w)/u}'
"$GPUENV" report | head -n 4
