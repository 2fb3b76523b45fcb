#!/usr/bin/env python3
"""Start-up cost of gpuenv binaries, paired: `startup_bench.py N BIN [BIN...] [-- ARGS]`.

Each round runs every binary once with ARGS (default `--version`), in an order
shuffled per round (seeded), and reports each binary's median and min wall
time, and the median of the paired differences against the first binary with
a 95 % bootstrap interval. The loader's work (shared libraries, relocations,
static initialisers) is most of what `--version` costs.
"""
import random
import statistics
import subprocess
import sys
import time


def main():
    argv = sys.argv[1:]
    args = ["--version"]
    if "--" in argv:
        i = argv.index("--")
        argv, args = argv[:i], argv[i + 1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    n, bins = int(argv[0]), argv[1:]
    rng = random.Random(7)
    times = {b: [] for b in bins}
    for b in bins:  # warm the page cache
        subprocess.run([b, *args], stdout=subprocess.DEVNULL, check=True)
    for _ in range(n):
        order = bins[:]
        rng.shuffle(order)
        for b in order:
            t = time.perf_counter()
            subprocess.run([b, *args], stdout=subprocess.DEVNULL, check=True)
            times[b].append((time.perf_counter() - t) * 1000)
    base = times[bins[0]]
    for b in bins:
        ms = times[b]
        line = f"{b}: median {statistics.median(ms):.1f} ms (min {min(ms):.1f})"
        if b != bins[0]:
            diffs = [x - y for x, y in zip(ms, base)]
            boots = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(2000))
            line += (f"; paired − {bins[0]}: {statistics.median(diffs):+.1f} ms "
                     f"(95 % CI {boots[50]:+.1f} … {boots[1949]:+.1f})")
        print(line)


if __name__ == "__main__":
    main()
