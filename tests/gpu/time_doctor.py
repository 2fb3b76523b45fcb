"""Times `gpuenv doctor` against what a user would otherwise run to learn
whether CUDA works: importing torch, and torch's collect_env. One run,
interleaved; prints a table and one JSON line (median and min, ms)."""
import json
import statistics
import subprocess
import sys
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
PY = sys.argv[2] if len(sys.argv) > 2 else "python3"
CMDS = {  # name: (argv, runs, exit codes that count as success)
    "gpuenv doctor": ([BIN, "doctor"], 10, (0, 1, 4)),
    "gpuenv doctor --extensions": ([BIN, "doctor", "--extensions"], 3, (0, 1, 4)),
    "python -c 'import torch; torch.cuda.is_available()'":
        ([PY, "-c", "import torch; print(torch.cuda.is_available())"], 3, (0,)),
    "python -m torch.utils.collect_env": ([PY, "-m", "torch.utils.collect_env"], 2, (0,)),
}

samples = {k: [] for k in CMDS}
for i in range(max(r for _, r, _ in CMDS.values())):
    for name, (cmd, runs, codes) in CMDS.items():
        if i >= runs:
            continue
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples[name].append((time.perf_counter() - t) * 1000)
        if r.returncode not in codes:
            sys.exit(f"{name} exited {r.returncode}")
result = {k: {"median_ms": round(statistics.median(v), 1), "min_ms": round(min(v), 1),
              "runs": len(v)} for k, v in samples.items()}
for k, v in result.items():
    print(f"{k:60s} median {v['median_ms']:9.1f} ms  min {v['min_ms']:9.1f} ms  ({v['runs']} runs)")
print(json.dumps(result))
