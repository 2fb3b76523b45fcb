#!/bin/bash
# Issue 6 on a machine with 2+ GPUs: topology snapshot, DDP training with and
# without gpuenv under torchrun. NVLink multicast stays off throughout.
set -u
cd "$(dirname "$0")/../.."
BIN=${GPUENV_BIN:-build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
N=$(nvidia-smi -L | wc -l)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
echo "== $N GPUs: topology"
nvidia-smi topo -m
$BIN detect
$BIN detect --json > "$OUT/multi-detect.json"
WORLD_SIZE=$N $BIN explain
echo "== DDP GPT-2-small, fp32, $N ranks"
torchrun --standalone --nproc-per-node=$N tests/gpu/ddp_train.py --label torchrun | tee "$OUT/ddp.jsonl"
torchrun --standalone --nproc-per-node=$N --no-python $BIN run -- python3 tests/gpu/ddp_train.py --label torchrun+gpuenv | tee -a "$OUT/ddp.jsonl"
TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 torchrun --standalone --nproc-per-node=$N tests/gpu/ddp_train.py --label torchrun+tf32-only | tee -a "$OUT/ddp.jsonl"
