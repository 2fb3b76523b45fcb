#!/bin/bash
# make test-gpu: on a machine with an NVIDIA GPU, the real NVML path end to
# end, plus the measurements behind docs/performance.md. Exits non-zero when
# a check fails. Results go to $OUT (default /tmp/gpuenv-gpu).
set -u
cd "$(dirname "$0")/../.."
BIN=${GPUENV_BIN:-build/gpuenv}
OUT=${OUT:-/tmp/gpuenv-gpu}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
fail=0
check() { if "$@"; then echo "ok: $*"; else echo "FAILED: $*"; fail=1; fi; }
export PYTHONUNBUFFERED=1

# Sections to run (default: all), e.g. `tests/gpu/run.sh core timing`.
SECTIONS=${*:-core timing train compile doctor inspect bench fleet}
want() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }

core() {
echo "== detect / explain / env on $(hostname), $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
$BIN --version
$BIN detect
$BIN detect --json > "$OUT/detect.json"; check test -s "$OUT/detect.json"
$BIN detect --cuda --json > "$OUT/detect-cuda.json"
$BIN explain | tee "$OUT/explain.txt"
$BIN env | tee "$OUT/env.sh"
check $PY - "$OUT/detect.json" <<'PYEOF'
import json, subprocess, sys
m = json.load(open(sys.argv[1]))
smi = subprocess.run(["nvidia-smi", "--query-gpu=uuid,compute_cap,memory.total", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True).stdout.strip().splitlines()
assert len(m["gpus"]) == len(smi), (len(m["gpus"]), smi)
for g, line in zip(m["gpus"], smi):
    uuid, cc, mem = [x.strip() for x in line.split(",")]
    assert g["uuid"] == uuid and g["compute_capability"] == cc, (g, line)
    assert g["memory_total_bytes"] // (1024 * 1024) == int(mem), (g["memory_total_bytes"], mem)
print("detect --json agrees with nvidia-smi on", len(smi), "GPU(s)")
PYEOF
check $BIN run -- $PY -c 'import os, torch; assert os.environ["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] == "1"; assert torch.cuda.is_available(); print("run: torch sees", torch.cuda.get_device_name(0))'

for i in 1 2 3; do GPUENV_TRACE=1 $BIN detect >/dev/null; done
}

timing() {
echo "== detect vs nvidia-smi"
$PY tests/gpu/time_detect.py "$BIN" 30 | tee "$OUT/time_detect.txt"

}

train() {
echo "== fp32 GPT-2-small training loop: plain vs under gpuenv run"
$PY tests/gpu/gpt_train.py --label plain | tee "$OUT/train.jsonl"
$BIN run -- $PY tests/gpu/gpt_train.py --label gpuenv-run | tee -a "$OUT/train.jsonl"

}

compile() {
echo "== torch.compile warm-up: cache root on a surviving directory"
CACHE=$(mktemp -d /tmp/gpuenv-cache-XXXX)
$BIN explain --cache-root "$CACHE" | grep -E "PYTHONPYCACHEPREFIX|PYTHONDONTWRITEBYTECODE|TORCHINDUCTOR" || true
$BIN run --cache-root "$CACHE" -- $PY tests/gpu/gpt_train.py --compile --steps 5 --label compile-first | tee -a "$OUT/compile.jsonl"
touch "$OUT/.before-second"; sleep 1
for label in compile-second compile-third compile-fourth compile-fifth; do
  $BIN run --cache-root "$CACHE" -- $PY tests/gpu/gpt_train.py --compile --steps 5 --label $label | tee -a "$OUT/compile.jsonl"
  # What the second start still had to build (Triton kernels it compiled).
  [ $label = compile-second ] && find "$CACHE" -newer "$OUT/.before-second" -name '*.cubin' | sed 's|.*/||' | tee "$OUT/second_start_built.txt"
done
# A new container: the default caches under /tmp and ~ start empty.
rm -rf /tmp/torchinductor_$(id -un) ~/.triton/cache
env -u TORCHINDUCTOR_CACHE_DIR -u TRITON_CACHE_DIR TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 $PY tests/gpu/gpt_train.py --compile --steps 5 --label compile-default-new-container | tee -a "$OUT/compile.jsonl"
$PY tests/gpu/compile_summary.py "$OUT/compile.jsonl" | tee "$OUT/compile_summary.txt"
}

doctor() {
echo "== doctor on the real torch, and its time against importing torch"
$BIN doctor --extensions | tee "$OUT/doctor.txt"
$BIN doctor --json > "$OUT/doctor.json"; check test -s "$OUT/doctor.json"
$PY tests/gpu/time_doctor.py "$BIN" "$PY" | tee "$OUT/time_doctor.txt"
check $PY tests/gpu/arch_list_vs_inspect.py "$BIN"
check tests/gpu/doctor_busy_gpu.sh "$BIN"
}

for s in core timing train compile doctor; do want $s && $s; done
if want inspect; then
  echo "== inspect vs cuobjdump"
  check tests/gpu/inspect_vs_cuobjdump.sh
fi
if want bench; then
  echo "== gpuenv bench and gpuenv check, side by side with PyTorch"
  check tests/gpu/bench.sh
fi
if want fleet; then
  echo "== detect, doctor (default and nagios), labels, run and check on the real driver"
  check tests/gpu/fleet.sh "$BIN"
fi
if want memory; then
  echo "== plan-memory against Hugging Face models trained on this GPU (tests/memory/hf_compare.py)"
  OUT="$OUT" tests/gpu/hf_memory_run.sh > "$OUT/hf_memory.txt" 2>&1 || fail=1
  check $PY tests/memory/hf_compare.py "$OUT/suite.jsonl" --gpuenv "$BIN"
fi
exit $fail
