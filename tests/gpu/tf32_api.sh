#!/bin/sh
# TF32 under `gpuenv run` on a real GPU with torch 2.9+: every kind of script
# gets what it asks for and no read of either TF32 switch raises
# (docs/rules/tf32.md); then the fp32 GPT-2 loop with and without gpuenv.
#   GPUENV=./build/gpuenv tests/gpu/tf32_api.sh
set -eu
GPUENV=${GPUENV:-./build/gpuenv}
here=$(dirname "$0")
echo "== the plan's TF32 settings"
"$GPUENV" explain 2>&1 | grep -E "TORCH_ALLOW_TF32|PYTHONPATH" || true
echo "== six kinds of script under gpuenv run"
"$GPUENV" run -- python3 "$here/tf32_api_probe.py" --inherit
echo "== fp32 GPT-2 loop: plain, then under gpuenv run"
python3 "$here/gpt_train.py" --steps 30 --label plain
"$GPUENV" run -- python3 "$here/gpt_train.py" --steps 30 --label gpuenv
