#!/usr/bin/env bash
# What issues 24 and 25 left to measure on one H200 (docs/performance.md, docs/precision.md):
#  (a) ResNet-50 on a task it learns in 300 steps (precision_train.py --task patterns): seeded
#      loss curves in fp32 (two more seeds: the tolerance, and a check of it), under
#      --tune=+precision and with stale weights; images/s at B128x224 fp32 / hand-written / hook.
#  (b) torch.compile under the hook: GPT-2 small compiled, fp32 (TF32), hand-written autocast,
#      and --tune=+precision (eager first in each job, for reference); tokens/s, Dynamo's graphs,
#      graph breaks and recompiles (its counters, and TORCH_LOGS=recompiles,graph_breaks lines).
#  (c) issue 24: a busy fp32 GPT-2 loop, one plain gpuenv run, then `gpuenv run --tune` twice:
#      nothing to apply, and said so.
#   GPUENV=./build/gpuenv tests/gpu/precision_more.sh [OUT_DIR]     PARTS="a b c" (default: all)
set -u
GPUENV=$(realpath "${GPUENV:-./build/gpuenv}")
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-/tmp/gpuenv-precision-more}" && cd "${1:-/tmp/gpuenv-precision-more}" && pwd)
export PYTHONUNBUFFERED=1
export GPUENV_CACHE_ROOT=${GPUENV_CACHE_ROOT:-$(mktemp -d)}
PARTS=${PARTS:-a b c}
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
T="python3 $here/precision_train.py"
said() {  # RC ERRFILE: the exit status, gpuenv's and the hook's lines, the error's tail when it failed
  echo "rc=$1"; grep -h "gpuenv" "$2" | head -6 | sed 's/^/    /'
  [ "$1" = 0 ] || tail -15 "$2" | sed 's/^/    err: /'
}
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)" \
  || echo "torchvision is missing: part (a) fails"
date -u +"%F %T UTC"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

if has a; then
echo "== (a) ResNet-50: speed, then 300-step curves on the patterns task"
# RES_SPEED: images/s (B128x224; RES_SPEED= leaves it out), RES_SMALL: at the curves' size;
# RES_CURVE: the curves.
SPEED=${RES_SPEED-"--model resnet --batch 128 --size 224 --steps 15"}
SMALL=${RES_SMALL:-"--model resnet --batch 64 --size 64 --steps 50"}
CURVE=${RES_CURVE:-"--model resnet --task patterns --batch 64 --size 64 --lr 0.01 --lr-warmup 60 --curve 300"}
BIG=; BIG_P=
[ -n "$SPEED" ] && BIG="$SPEED --label fp32 --next $SPEED --variant autocast --label autocast --next" \
  && BIG_P="$SPEED --label precision --next"
"$GPUENV" run -- $T $BIG $SMALL --label fp32 --next $SMALL --variant autocast --label autocast \
  --next $CURVE --label fp32 --next $CURVE --seed 1 --label fp32_seed1 --next $CURVE --seed 2 --label fp32_seed2 \
  --next $CURVE --variant autocast --label autocast --next $CURVE --variant stale --label stale \
  > "$out/resnet.jsonl" 2> "$out/resnet.err"
said $? "$out/resnet.err"
"$GPUENV" run --tune=+precision -- $T $BIG_P $SMALL --label precision \
  --next $CURVE --label precision \
  > "$out/resnet_precision.jsonl" 2> "$out/resnet_precision.err"
said $? "$out/resnet_precision.err"
python3 "$here/precision_compare.py" "$out"/resnet*.jsonl | tee "$out/summary_resnet.txt"
fi

if has b; then
echo "== (b) GPT-2 small under torch.compile: fp32, hand-written autocast, --tune=+precision"
EAGER="--model gpt --batch 16 --steps 20"
COMP="--model gpt --batch 16 --steps 20 --compile"
export TORCH_LOGS=recompiles,graph_breaks
"$GPUENV" run -- $T $EAGER --label fp32 --next $COMP --label compile_fp32 \
  > "$out/gpt_compile_fp32.jsonl" 2> "$out/gpt_compile_fp32.err"; said $? "$out/gpt_compile_fp32.err"
"$GPUENV" run -- $T $EAGER --variant autocast --label autocast --next $COMP --variant autocast --label compile_autocast \
  > "$out/gpt_compile_autocast.jsonl" 2> "$out/gpt_compile_autocast.err"; said $? "$out/gpt_compile_autocast.err"
"$GPUENV" run --tune=+precision -- $T $EAGER --label precision --next $COMP --label compile_precision \
  > "$out/gpt_compile_precision.jsonl" 2> "$out/gpt_compile_precision.err"; said $? "$out/gpt_compile_precision.err"
unset TORCH_LOGS
for v in fp32 autocast precision; do
  e="$out/gpt_compile_$v.err"
  echo "  $v: TORCH_LOGS lines: recompiles $(grep -c -i 'recompil' "$e"), graph breaks $(grep -c -i 'graph break' "$e")"
  grep -h "gpuenv --tune=+precision\|Recompiling\|Graph break" "$e" | head -6 | sed 's/^/    /'
done
python3 "$here/precision_compare.py" "$out"/gpt_compile_*.jsonl | tee "$out/summary_compile.txt"
fi

if has c; then
echo "== (c) a busy fp32 GPT-2 loop: gpuenv run, then gpuenv run --tune twice"
export GPUENV_CACHE_ROOT=$(mktemp -d)  # a store of its own: no record before the first run
cd "$here" || exit 2  # one directory: one command fingerprint
for i in 0 1 2; do
  flag=; [ $i -gt 0 ] && flag=--tune
  "$GPUENV" run $flag -- python3 gpt_train.py --steps 80 --batch 16 --label busy > "$out/busy$i.out" 2> "$out/busy$i.err"
  echo "run $i (${flag:-plain}): rc=$? $(python3 -c "import json,sys; print(round(json.loads(open(sys.argv[1]).read().split(chr(10))[-2])['tokens_per_s']))" "$out/busy$i.out" 2>&1)"
  grep -v "^\s*$" "$out/busy$i.err" | head -12 | sed 's/^/    /'
done
"$GPUENV" report | tee "$out/busy_report.txt"
"$GPUENV" report --json | python3 -c "
import json, sys
for j in json.load(sys.stdin)['jobs'][:3]:
    print('job', j['id'], 'verdict', j['verdict']['name'], 'tuned=%r' % j.get('tuned'), '|', j['verdict']['evidence'])"
fi
echo "done $(date -u +%T)"
