"""Times `gpuenv detect` against nvidia-smi's query in one run and prints a
table plus one JSON line (median, min, p90 in ms).

Each round runs every command once, in an order shuffled per round (seeded),
so no command always follows the slow `detect --cuda`. The verdict compares
each gpuenv command with nvidia-smi round by round: the median of the paired
differences and its 95 % bootstrap interval.

  python3 tests/gpu/time_detect.py BIN [RUNS] [BASELINE_BIN]
BASELINE_BIN (another build, say the commit before a start-up change) adds
its detect, env and --version to the same shuffled rounds, each paired with
nvidia-smi as gpuenv's are; the judge reads gpuenv's own rows only."""
import json
import random
import statistics
import subprocess
import sys
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
SMI = "nvidia-smi --query-gpu=name,compute_cap,memory.total"
CMDS = {
    "gpuenv detect": [BIN, "detect"],
    "gpuenv env": [BIN, "env"],
    "gpuenv detect --json": [BIN, "detect", "--json"],
    "gpuenv detect --cuda": [BIN, "detect", "--cuda"],
    "gpuenv --version (the process alone)": [BIN, "--version"],
    SMI: ["nvidia-smi", "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"],
}
if len(sys.argv) > 3:
    BASE = sys.argv[3]
    CMDS.update({"baseline detect": [BASE, "detect"], "baseline env": [BASE, "env"],
                 "baseline --version (the process alone)": [BASE, "--version"]})

rng = random.Random(2026)
samples = {k: [] for k in CMDS}
for _ in range(RUNS):
    order = list(CMDS)
    rng.shuffle(order)
    for name in order:
        t = time.perf_counter()
        r = subprocess.run(CMDS[name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples[name].append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            sys.exit(f"{name} exited {r.returncode}")


def paired(name):
    d = [a - b for a, b in zip(samples[name], samples[SMI])]
    boot = sorted(statistics.median(rng.choices(d, k=len(d))) for _ in range(2000))
    return round(statistics.median(d), 2), round(boot[50], 2), round(boot[1949], 2)


result = {}
for k, v in samples.items():
    s = sorted(v)
    result[k] = {"median_ms": round(statistics.median(v), 2), "min_ms": round(s[0], 2),
                 "p90_ms": round(s[int(0.9 * (len(s) - 1))], 2)}
    if k.startswith(("gpuenv", "baseline")) and "--cuda" not in k and "--version" not in k:
        result[k]["minus_smi_ms"] = paired(k)
for k, v in result.items():
    line = f"{k:58s} median {v['median_ms']:8.2f}  min {v['min_ms']:8.2f}  p90 {v['p90_ms']:8.2f} ms"
    if "minus_smi_ms" in v:
        m, lo, hi = v["minus_smi_ms"]
        line += f"   vs nvidia-smi {m:+.2f} ms (95 % CI {lo:+.2f} .. {hi:+.2f})"
    print(line)
print(json.dumps({"runs": RUNS, "timings": result}))
