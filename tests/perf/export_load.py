#!/usr/bin/env python3
"""Load test of `gpuenv export` at its descriptor limit (issue 21, item 4; run
by ctest as perf.export_load, docs/performance.md has the figures).

  python3 tests/perf/export_load.py --gpuenv build/gpuenv [--seconds 14]

Then, under `ulimit -n 10` (below what the connection cap assumes, so accept()
fails with EMFILE) with 30 idle clients, the exporter must stay up, use under
0.2 s of CPU per second, log under 64 KiB and answer a scrape within 5 s.

Then two floods of idle connections queued ahead of a scrape, reopened as the
exporter closes them (issue 35, item 2): under `ulimit -n 32` (a table of 4)
500 of them, and under the usual 1024 1,000 (a table of 64). Meanwhile 12
scrapers send their request 10-50 ms after connecting. Every scrape must
answer, within 1 s.

The exporter runs under `ulimit -n 64` with the stand-in NVML (8 GPUs). 100
idle clients connect and send nothing; 50 trickle a request's head one byte
every 4 s; each reconnects at once when the exporter closes it. Meanwhile a
scraper GETs /metrics on a new connection every 0.5 s. The attack lasts
--seconds, and longer (up to 60 s) until the exporter has closed every
trickling client once. The figures it prints are docs/performance.md's; the
bounds it fails on (exit 1) are loose, so that a loaded machine (CI's two
cores) cannot break them:
- a scrape fails, or takes 10 s or more (10x the 1 s it answers within);
- the exporter uses 0.2 s of CPU per second or more (utime+stime from
  /proc/PID/stat over the whole attack; load does not add CPU time);
- a trickling client is never closed (the request deadline is 10 s);
- the exporter writes more than 64 KiB on stderr.
"""
import argparse
import os
import random
import re
import resource
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: trickle\r\n" + b"X-Pad: " + b"a" * 200 + b"\r\n\r\n"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, port, trickle):
        self.port, self.trickle = port, trickle
        self.sock = None
        self.connect()

    def connect(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.sock.connect_ex(("127.0.0.1", self.port))
        self.opened = time.monotonic()
        self.sent = 0
        self.next_byte = self.opened + 4

    def tick(self, now):
        """Sends the next byte when due; False once the exporter closed it."""
        if self.trickle and now >= self.next_byte and self.sent < len(REQUEST):
            try:
                self.sock.send(REQUEST[self.sent:self.sent + 1])
                self.sent += 1
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                return False
            self.next_byte = now + 4
        return True

    def closed(self):
        try:
            return self.sock.recv(4096) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True


def scrape(port, delay=0.0):
    """GET /metrics on a new connection, the request sent `delay` s after
    the connect; the seconds it took and what was wrong ("" if nothing)."""
    t = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            time.sleep(delay)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as e:
        return time.monotonic() - t, f"error: {e}"
    ok = data.startswith(b"HTTP/1.1 200") and b"gpuenv_gpu_up{" in data
    return time.monotonic() - t, "" if ok else f"answer: {data[:80]!r}"


def start(args, log, nofile=64):
    env = dict(os.environ)
    env["GPUENV_NVML_LIBRARY"] = os.path.join(args.fake_dir, "libnvidia-ml.so.1")
    env["FAKE_NVML_SCENARIO"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake_nvml",
                                             "scenarios", "h200_8_busy.txt")

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY:
        nofile = min(nofile, hard)

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    p = subprocess.Popen([args.gpuenv, "export", "--listen", "127.0.0.1:0"], env=env, stderr=log,
                         stdin=subprocess.DEVNULL, preexec_fn=limit)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        time.sleep(0.1)
        m = re.search(rb"http://127\.0\.0\.1:(\d+)/", open(log.name, "rb").read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
    p.kill()
    sys.exit("export did not start: " + open(log.name).read())


def attack(port, pid, seconds):
    clients = [Client(port, trickle=False) for _ in range(100)] + [Client(port, trickle=True) for _ in range(50)]
    start, c0 = time.monotonic(), cpu_seconds(pid)
    next_scrape, scrapes, failures, longest_trickle, reconnects = start + 1, [], [], 0.0, 0
    trickles_closed = set()
    while time.monotonic() - start < seconds or (len(trickles_closed) < 50 and time.monotonic() - start < 60):
        now = time.monotonic()
        for i, c in enumerate(clients):
            if not c.tick(now) or c.closed():
                if c.trickle:
                    longest_trickle = max(longest_trickle, now - c.opened)
                    trickles_closed.add(i)
                c.connect()
                reconnects += 1
        for c in clients:
            if c.trickle:
                longest_trickle = max(longest_trickle, now - c.opened)
        if now >= next_scrape:
            took, problem = scrape(port)
            scrapes.append(took)
            if problem:
                failures.append(problem)
            next_scrape = time.monotonic() + 0.5
        time.sleep(0.05)
    wall = time.monotonic() - start
    cpu = cpu_seconds(pid) - c0
    for c in clients:
        c.sock.close()
    return scrapes, failures, cpu / wall, longest_trickle, len(trickles_closed), reconnects, wall


def starved(args):
    """ulimit -n 10: below what the connection cap assumes, so accept() itself
    fails (EMFILE). The exporter must stay up, pause instead of spinning,
    log a line, not a flood, and still answer (more slowly: within 5 s, and
    it fails only at 30 s, which a loaded machine cannot reach)."""
    bad = []
    with tempfile.NamedTemporaryFile(prefix="gpuenv-export-starved-", suffix=".log") as log:
        p, port = start(args, log, nofile=10)
        try:
            # One scrape while descriptors remain: UBSan checks a type the
            # first time through a pipe of its own (IsAccessibleMemoryRange),
            # which fails once accept() has taken every descriptor, and then
            # reports a false "invalid vptr"; later checks use its cache.
            scrape(port)
            idle = []
            for _ in range(30):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                idle.append(s)
            c0, t0 = cpu_seconds(p.pid), time.monotonic()
            time.sleep(3)
            cpu_rate = (cpu_seconds(p.pid) - c0) / (time.monotonic() - t0)
            took, problem = scrape(port)
            alive = p.poll() is None
            for s in idle:
                s.close()
        finally:
            p.terminate()
            p.wait(5)
        log_bytes = os.path.getsize(log.name)
        log_text = open(log.name, errors="replace").read()
    print(f"ulimit -n 10, 30 idle clients: exporter CPU {cpu_rate:.3f} s per s; scrape {1000 * took:.0f} ms "
          f"{problem or 'ok'}; stderr {log_bytes} bytes; {'alive' if alive else 'DIED'}")
    if not alive:
        bad.append(f"the exporter died (status {p.returncode})")
    if problem or took >= 30:
        bad.append(f"the scrape failed or took 30 s or more: {problem}")
    if cpu_rate >= args.cpu_limit:
        bad.append(f"the exporter used {args.cpu_limit} s of CPU per second or more at EMFILE")
    if log_bytes > 64 * 1024:
        bad.append("more than 64 KiB of log at EMFILE")
    if "Too many open files" not in log_text:
        bad.append("accept()'s EMFILE was not logged")
    return bad, log_text


def open_idle(port, count):
    """`count` connections that send nothing, each established (queued on
    the exporter's listener) before this returns, or after 5 s."""
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    poll = select.poll()
    for s in socks:
        poll.register(s, select.POLLOUT)
    waiting, end = {s.fileno() for s in socks}, time.monotonic() + 5
    while waiting and time.monotonic() < end:
        for fd, _ in poll.poll(100):
            waiting.discard(fd)
            poll.unregister(fd)
    return socks


def reopen_closed(port, socks):
    """Reopens the idle connections the exporter closed; how many."""
    reopened = 0
    for i, s in enumerate(socks):
        try:
            closed = s.recv(1) == b""
        except (BlockingIOError, InterruptedError):
            closed = False
        except OSError:
            closed = True
        if closed:
            s.close()
            socks[i] = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks[i].setblocking(False)
            socks[i].connect_ex(("127.0.0.1", port))
            reopened += 1
    return reopened


def late_scrapes(port, count, seed, results):
    """`count` scrapes one after another, each sending its request 10-50 ms
    after its connect, as a scraper's request often comes a moment after the
    connect (turning away a newcomer that had sent nothing failed 5 of 24)."""
    rng = random.Random(seed)
    for _ in range(count):
        results.append(scrape(port, delay=rng.uniform(0.01, 0.05)))


def flood(args, nofile, count, scrapes=4, late=12):
    """`count` idle connections queued ahead of the first scrape, reopened
    as the exporter closes them, and meanwhile `late` scrapes whose request
    comes after the connect; every scrape must answer within 1 s."""
    with tempfile.NamedTemporaryFile(prefix="gpuenv-export-flood-", suffix=".log") as log:
        p, port = start(args, log, nofile=nofile)
        took, late_took, reopened = [], [], 0
        try:
            socks = open_idle(port, count)
            scraper = threading.Thread(target=late_scrapes, args=(port, late, nofile, late_took),
                                       daemon=True)
            scraper.start()
            for _ in range(scrapes):
                took.append(scrape(port))
                end = time.monotonic() + 0.3
                while time.monotonic() < end:
                    reopened += reopen_closed(port, socks)
                    time.sleep(0.05)
            while scraper.is_alive():  # the flood goes on while they scrape
                reopened += reopen_closed(port, socks)
                scraper.join(0.05)
            alive = p.poll() is None
            for s in socks:
                s.close()
        finally:
            p.terminate()
            p.wait(5)
        log_text = open(log.name, errors="replace").read()
    late_failed = [problem for _, problem in late_took if problem]
    print(f"ulimit -n {nofile}, {count} idle connections ({reopened} reopened): scrapes "
          + ", ".join(f"{1000 * t:.0f}" for t, _ in took) + f" ms; {len(late_took)} sending 10-50 ms after "
          f"connecting: max {1000 * max((t for t, _ in late_took), default=0):.0f} ms, {len(late_failed)} failed; "
          f"{'alive' if alive else 'DIED'}")
    bad = []
    if not alive:
        bad.append(f"the exporter died under {count} idle connections (status {p.returncode})")
    problems = [problem for _, problem in took if problem] + late_failed
    if problems:
        bad.append(f"{len(problems)} scrapes failed under {count} idle connections at ulimit -n {nofile}: "
                   f"{problems[:2]}")
    slowest = max(t for t, _ in took + late_took)
    if slowest >= 1.0:
        bad.append(f"a scrape took {slowest:.2f} s (1 s or more) under {count} idle connections "
                   f"at ulimit -n {nofile}")
    return bad, log_text


def raise_own_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft == resource.RLIM_INFINITY or soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def floods(args):
    bad, logs = [], ""
    own = raise_own_limit(1200)
    for nofile, count in ((32, 500), (1024, 1000)):
        count = min(count, own - 64)
        b, log_text = flood(args, nofile, count)
        bad += b
        if b:
            logs += log_text[:1000]
    return bad, logs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuenv", default="build/gpuenv")
    ap.add_argument("--fake-dir", default=None, help="where libnvidia-ml.so.1 (the stand-in) is; default BUILD/fake")
    ap.add_argument("--seconds", type=float, default=14)
    # The release build's bound; an ASan+UBSan build does the same work at
    # about three times the CPU (tests/CMakeLists.txt passes 0.6 there).
    ap.add_argument("--cpu-limit", type=float, default=0.2)
    args = ap.parse_args()
    if args.fake_dir is None:
        args.fake_dir = os.path.join(os.path.dirname(os.path.abspath(args.gpuenv)), "fake")
    with tempfile.NamedTemporaryFile(prefix="gpuenv-export-load-", suffix=".log") as log:
        p, port = start(args, log)
        try:
            scrapes, failures, cpu_rate, longest, trickles_closed, reconnects, wall = attack(port, p.pid, args.seconds)
        finally:
            p.terminate()
            p.wait(5)
        log_bytes = os.path.getsize(log.name)
        log_text = open(log.name, errors="replace").read()
    s = sorted(scrapes)
    print(f"ulimit -n 64, 100 idle + 50 trickling clients reconnecting, {wall:.1f} s, {reconnects} reconnects")
    print(f"{len(s)} scrapes: median {1000 * s[len(s) // 2]:.1f} ms, max {1000 * s[-1]:.1f} ms; "
          f"{len(failures)} failed")
    print(f"exporter CPU: {cpu_rate:.3f} s per s; longest trickling connection {longest:.1f} s "
          f"({trickles_closed} of 50 closed); "
          f"stderr {log_bytes} bytes")
    bad, starved_log = starved(args)
    if bad:
        log_text = starved_log
    flood_bad, flood_log = floods(args)
    if flood_bad:
        bad += flood_bad
        log_text = flood_log
    if failures:
        bad.append(f"scrapes failed: {failures[:3]}")
    if not s or s[-1] >= 10.0:
        bad.append("a scrape took 10 s or more")
    if cpu_rate >= args.cpu_limit:
        bad.append(f"the exporter used {args.cpu_limit} s of CPU per second or more")
    if trickles_closed < 50:
        bad.append(f"{50 - trickles_closed} trickling connections were never closed (the request deadline is 10 s)")
    if log_bytes > 64 * 1024:
        bad.append("more than 64 KiB of log")
    if bad:
        print("FAIL: " + "; ".join(bad) + "\nlog (start):\n" + log_text[:2000])
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
