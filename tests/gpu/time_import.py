"""Times `import torch` in the environment as it is and under `gpuenv run`
with a fresh cache root (the first start writes torch's bytecode under
it, the next ones read it). Prints a table and one JSON line (seconds)."""
import json
import statistics
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
PY = sys.argv[2] if len(sys.argv) > 2 else "python3"
IMPORT = [PY, "-c", "import torch"]
root = tempfile.mkdtemp(prefix="gpuenv-bytecode-")
UNDER = [BIN, "run", "--cache-root", root, "--"] + IMPORT


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t


first = timed(UNDER)  # writes the bytecode
plain, warm = [], []
for _ in range(3):
    plain.append(timed(IMPORT))
    warm.append(timed(UNDER))
result = {"plain_median_s": round(statistics.median(plain), 2),
          "gpuenv_first_s": round(first, 2),
          "gpuenv_warm_median_s": round(statistics.median(warm), 2)}
print(f"import torch, as the image is:            median {result['plain_median_s']:.2f} s")
print(f"under gpuenv run, first (writes bytecode): {result['gpuenv_first_s']:.2f} s")
print(f"under gpuenv run, later starts:           median {result['gpuenv_warm_median_s']:.2f} s")
print(json.dumps(result))
