#!/bin/sh
# `gpuenv run --tune=+precision` on a real GPU and torch (docs/precision.md):
# GPT-2 small and ResNet-50 in fp32 under gpuenv run, with hand-written bf16
# autocast, and under --tune=+precision: speed, seeded loss curves against a
# tolerance (fp32 with another seed) that the stale-weights variant must
# exceed; then the job records, every kind of script, and DDP under torchrun.
#   GPUENV=./build/gpuenv tests/gpu/precision.sh [OUT_DIR]
set -u  # a failing step says so; the rest still run
GPUENV=${GPUENV:-./build/gpuenv}
here=$(dirname "$0")
out=${1:-/tmp/gpuenv-precision}
mkdir -p "$out"
T="python3 $here/precision_train.py"
GPT_CURVE="--model gpt --batch 8 --seq 256 --curve 300"
RES_SPEED="--model resnet --batch 128 --size 224 --steps 15"
# ResNet-50's curves on the task it learns, warmed up: the repeatable ones
# (docs/performance.md, "ResNet-50 curves that learn"; B32 unwarmed spiked, and
# a second seed fell outside the first's tolerance).
RES_CURVE="--model resnet --task patterns --batch 64 --size 64 --lr 0.01 --lr-warmup 60 --curve 300"
# ONLY=resnet: the ResNet-50 runs alone.
only=${ONLY:-all}
if [ "$only" = all ]; then
echo "== bench: the bf16 and TF32 GEMMs that the feedback quotes"
"$GPUENV" bench --only gemm_bf16,gemm_tf32 --sizes 8192 --trials 5 || echo "bench failed: the busy verdict will say so"
echo "== GPT-2 small, plain python (IEEE fp32)"
$T --model gpt --steps 10 --label plain > "$out/plain.jsonl"
echo "== GPT-2 under gpuenv run: the fp32 script (TF32), hand-written autocast, curves, stale weights last"
"$GPUENV" run -- $T --model gpt --label fp32 --next --model gpt --variant autocast --label autocast \
  --next $GPT_CURVE --label fp32 --next $GPT_CURVE --seed 1 --label fp32_seed1 \
  --next $GPT_CURVE --variant stale --label stale > "$out/gpt.jsonl"
echo "== GPT-2 under gpuenv run --tune=+precision: the same fp32 script"
"$GPUENV" run --tune=+precision -- $T --model gpt --label precision --next $GPT_CURVE --label precision \
  > "$out/gpt_precision.jsonl"
fi
echo "== ResNet-50 under gpuenv run, then under --tune=+precision"
"$GPUENV" run -- $T $RES_SPEED --label fp32 --next $RES_SPEED --variant autocast --label autocast \
  --next $RES_SPEED --variant autocast_cl --label autocast_cl \
  --next $RES_CURVE --label fp32 --next $RES_CURVE --seed 1 --label fp32_seed1 \
  --next $RES_CURVE --variant stale --label stale > "$out/resnet.jsonl"
"$GPUENV" run --tune=+precision -- $T $RES_SPEED --label precision --next $RES_CURVE --label precision \
  > "$out/resnet_precision.jsonl"
python3 "$here/precision_compare.py" "$out"/*.jsonl | tee "$out/summary.txt"
[ "$only" = all ] || exit 0
echo "== the records: precision, and the busy verdict's suggestion"
"$GPUENV" report --limit 5
"$GPUENV" report --json | python3 -c "
import json, sys
for j in json.load(sys.stdin)['jobs'][:2]:
    c = j['context']
    print('job', j['id'], 'precision=%r bf16=%r bf16_gain=%r' % (c.get('precision'), c.get('bf16'), c.get('bf16_gain')))
    print('  verdict', j['verdict']['name'] + ':', j['verdict']['fix'])"
echo "== kinds of script under --tune=+precision"
"$GPUENV" run --tune=+precision -- python3 "$here/precision_probe.py" | tee "$out/kinds.jsonl"
echo "== DDP under torchrun, --tune=+precision"
torchrun --nproc-per-node=1 --no-python "$GPUENV" run --tune=+precision -- python3 "$here/ddp_train.py" --steps 10 --label ddp-precision
