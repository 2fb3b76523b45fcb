"""Times `gpuenv detect` against nvidia-smi's query in one run, interleaved,
and prints a table plus one JSON line (median and min, ms)."""
import json
import statistics
import subprocess
import sys
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
CMDS = {
    "gpuenv detect": [BIN, "detect"],
    "gpuenv detect --json": [BIN, "detect", "--json"],
    "gpuenv env": [BIN, "env"],
    "gpuenv detect --cuda": [BIN, "detect", "--cuda"],
    "nvidia-smi --query-gpu=name,compute_cap,memory.total": [
        "nvidia-smi", "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"],
}

samples = {k: [] for k in CMDS}
for _ in range(RUNS):
    for name, cmd in CMDS.items():
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples[name].append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            sys.exit(f"{name} exited {r.returncode}")
result = {k: {"median_ms": round(statistics.median(v), 2), "min_ms": round(min(v), 2)}
          for k, v in samples.items()}
for k, v in result.items():
    print(f"{k:58s} median {v['median_ms']:8.2f} ms   min {v['min_ms']:8.2f} ms")
print(json.dumps({"runs": RUNS, "timings": result}))
