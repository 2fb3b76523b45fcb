#!/usr/bin/env python3
"""Benchmark of `gpuenv export` (docs/performance.md): scrape latency and the
exporter's own CPU use. Not a test: it prints figures.

  python3 tests/perf/export_bench.py [--gpuenv build/gpuenv] [--scrapes 1000] [--cpu-seconds 60]

With --stand-in (the default) it loads the test suite's stand-in NVML
(build/fake/libnvidia-ml.so.1) answering as tests/fake_nvml/scenarios/h200_8_busy.txt,
8 GPUs; with --real it uses the machine's own driver.

1. Latency: --scrapes GETs of /metrics, one after another on one kept-alive
   connection (as Prometheus scrapes), then the same number on a new
   connection each; p50, p99 and max of each, in milliseconds.
2. CPU: the exporter's user+system time (/proc/PID/stat) over --cpu-seconds
   at the default --interval (5 s), scraped every 15 s (Prometheus' default
   scrape interval), as a percentage of one core.
"""
import argparse
import http.client
import os
import re
import subprocess
import sys
import time


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def start(gpuenv, env, interval):
    args = [gpuenv, "export", "--listen", "127.0.0.1:0"] + (["--interval", interval] if interval else [])
    p = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        sys.exit(f"export did not start: {line}{p.stderr.read()}")
    return p, int(m.group(1)), line.strip()


def latencies(port, n, keep_alive):
    out, size = [], 0
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        if not keep_alive:
            conn = http.client.HTTPConnection("127.0.0.1", port)
        t = time.perf_counter()
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        body = r.read()
        out.append((time.perf_counter() - t) * 1000)
        if r.status != 200:
            sys.exit(f"/metrics answered {r.status}")
        size = len(body)
        if not keep_alive:
            conn.close()
    return out, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuenv", default="build/gpuenv")
    ap.add_argument("--scrapes", type=int, default=1000)
    ap.add_argument("--cpu-seconds", type=float, default=60)
    ap.add_argument("--real", action="store_true", help="the machine's NVML, not the stand-in")
    a = ap.parse_args()
    env = dict(os.environ)
    if not a.real:
        env["GPUENV_NVML_LIBRARY"] = os.path.abspath(os.path.join(os.path.dirname(a.gpuenv), "fake/libnvidia-ml.so.1"))
        here = os.path.dirname(os.path.abspath(__file__))
        env["FAKE_NVML_SCENARIO"] = os.path.join(here, "..", "fake_nvml", "scenarios", "h200_8_busy.txt")

    p, port, line = start(a.gpuenv, env, "")
    try:
        print(line)
        for keep in (True, False):
            ms, size = latencies(port, a.scrapes, keep)
            kind = "one kept-alive connection" if keep else "a new connection each"
            print(f"{a.scrapes} scrapes on {kind}: p50 {percentile(ms, 50):.2f} ms, "
                  f"p99 {percentile(ms, 99):.2f} ms, max {max(ms):.2f} ms ({size} bytes)")
        hz = os.sysconf("SC_CLK_TCK")
        t0, c0 = time.monotonic(), cpu_ticks(p.pid)
        while time.monotonic() - t0 < a.cpu_seconds:
            latencies(port, 1, True)
            time.sleep(min(15, max(0, a.cpu_seconds - (time.monotonic() - t0))))
        used = (cpu_ticks(p.pid) - c0) / hz
        wall = time.monotonic() - t0
        print(f"CPU over {wall:.0f} s at the default interval, scraped every 15 s: "
              f"{used:.2f} s = {100 * used / wall:.3f}% of one core")
    finally:
        p.terminate()
        p.wait(5)


if __name__ == "__main__":
    main()
