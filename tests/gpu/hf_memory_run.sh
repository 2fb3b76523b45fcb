#!/bin/sh
# On the H200: the Hugging Face memory suite and the saved-tensor probe, JSON lines
# into $OUT (or ./out). tests/memory/hf_h200_measured.json is written from them.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
rm -f "$OUT/probe.jsonl" "$OUT/suite.jsonl" "$OUT/plain.jsonl"  # each run its own rows (the scripts append)
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
# The allocator plan-memory's "Fits" assumes, as gpuenv run sets it: under the
# default one, qwen3's LoRA row (73.4 GiB allocated at its peak) ran out of the
# H100's 79.2 GiB with 9.5 GiB reserved but unusable (docs/performance.md).
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF-expandable_segments:True}
python3 -c 'import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)'
python3 tests/gpu/hf_memory_measure.py --probe --out "$OUT/probe.jsonl" > /dev/null 2> "$OUT/probe.err"
python3 tests/gpu/hf_memory_measure.py --suite --out "$OUT/suite.jsonl" 2> "$OUT/suite.err" \
  | python3 -c 'import sys,json
for l in sys.stdin:
    r=json.loads(l); print(r["name"], r.get("peak"), r.get("attn_implementation"), r.get("error","")[:200])'
for f in "--untied --seq 1024 --batch 8 --precision fp32" "--untied --seq 1024 --batch 8 --precision bf16-mixed" \
         "--untied --seq 1024 --batch 2 --precision fp32" "--untied --seq 512 --batch 16 --precision bf16-mixed --checkpointing"; do
  python3 tests/gpu/plan_memory_measure.py --arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 $f \
    | sed "s|^|{\"flags\": \"--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 $f\", \"row\": |; s|\$|}|" >> "$OUT/plain.jsonl"
done
tail -c 3000 "$OUT/suite.err"
