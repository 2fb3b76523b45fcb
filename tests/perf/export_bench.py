#!/usr/bin/env python3
"""Benchmark of `gpuenv export` (docs/performance.md): scrape latency and the
exporter's own CPU use. Not a test: it prints figures.

  python3 tests/perf/export_bench.py [--gpuenv build/gpuenv] [--scrapes 1000] [--cpu-seconds 60]

With --jobs N (issue 38) every GPU holds N processes, of N/8 Slurm jobs (8
processes each), told from a fake host /proc and cgroup v2 tree (--proc-root,
--cgroup-root) made in a temporary directory: what the exporter reads each
round for the jobs. --compare runs the same without the jobs (--metrics
gpuenv,dcgm) first, side by side.

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
import tempfile
import time

GPUS = 8


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_host(root, per_gpu):
    """A host /proc and cgroup v2 tree with `per_gpu` processes on each of the
    8 GPUs, 8 processes a Slurm job; returns (proc, cgroup, process table)."""
    proc, cg, table = os.path.join(root, "proc"), os.path.join(root, "cgroup"), []
    write(os.path.join(cg, "cgroup.controllers"), "cpuset cpu memory\n")
    pid = 1000
    for gpu in range(GPUS):
        for i in range(per_gpu):
            job = 100 + (gpu * per_gpu + i) // 8
            path = f"/system.slice/slurmstepd.scope/job_{job}/step_0/user/task_{i % 8}"
            d = os.path.join(proc, str(pid))
            write(os.path.join(d, "stat"), f"{pid} (python3) S 1 {pid} {pid} 0 -1 0 0 0 0 0 {pid} 50 0 0 20 0 1 0 1 0 0\n")
            write(os.path.join(d, "status"), f"Name:\tpython3\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n")
            write(os.path.join(d, "cgroup"), f"0::{path}\n")
            write(os.path.join(d, "comm"), "python3\n")
            write(os.path.join(d, "environ"), f"SLURM_JOB_ID={job}\0HOME=/home/u\0")
            write(os.path.join(cg + path, "cgroup.procs"), f"{pid}\n")
            jobdir = os.path.join(cg, f"system.slice/slurmstepd.scope/job_{job}")
            write(os.path.join(jobdir, "cpu.stat"), f"usage_usec {pid * 1000}\nuser_usec 0\nsystem_usec 0\n")
            write(os.path.join(jobdir, "cpu.max"), "800000 100000\n")
            table.append(f"gpu={gpu} pid={pid} mem={1 << 30} sm={i % 50}")
            pid += 1
    write(os.path.join(root, "processes.txt"), "\n".join(table) + "\n")
    return proc, cg, os.path.join(root, "processes.txt")


def start(gpuenv, env, interval, extra=()):
    args = [gpuenv, "export", "--listen", "127.0.0.1:0"] + (["--interval", interval] if interval else []) + list(extra)
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
    ap.add_argument("--jobs", type=int, default=0, help="processes on each GPU, from a fake host tree")
    ap.add_argument("--compare", action="store_true", help="with --jobs: first without the jobs")
    a = ap.parse_args()
    env = dict(os.environ)
    if not a.real:
        env["GPUENV_NVML_LIBRARY"] = os.path.abspath(os.path.join(os.path.dirname(a.gpuenv), "fake/libnvidia-ml.so.1"))
        here = os.path.dirname(os.path.abspath(__file__))
        env["FAKE_NVML_SCENARIO"] = os.path.join(here, "..", "fake_nvml", "scenarios", "h200_8_busy.txt")

    runs = [("", [])]
    if a.jobs:
        tmp = tempfile.mkdtemp(prefix="gpuenv-export-bench.")
        proc, cg, table = fake_host(tmp, a.jobs)
        env["FAKE_NVML_PROCESSES"] = table
        jobs = [f"{GPUS} GPUs x {a.jobs} processes, {GPUS * a.jobs // 8} Slurm jobs",
                ["--proc-root", proc, "--cgroup-root", cg]]
        runs = ([("without the jobs (--metrics gpuenv,dcgm)", ["--metrics", "gpuenv,dcgm"])] if a.compare else []) + [jobs]
    for title, extra in runs:
        if title:
            print(f"== {title}")
        measure(a, env, extra)


def measure(a, env, extra):
    p, port, line = start(a.gpuenv, env, "", extra)
    try:
        print(line)
        time.sleep(0.5)  # the jobs' first round: a scrape before it serves no job
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
