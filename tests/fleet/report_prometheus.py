#!/usr/bin/env python3
"""`gpuenv report --job ID --prometheus URL` against a real Prometheus (ctest
fleet.report_prometheus; docs/cluster.md, "Reporting a job from Prometheus").

  python3 tests/fleet/report_prometheus.py --gpuenv build/gpuenv

It writes two hours of the exporters' per-job series (gpuenv_job_*, as `gpuenv
export` serves them on three nodes, every 15 s; one names its host label
`Hostname`, as --hostname-label Hostname and exporters before it do) as OpenMetrics, backfills them
with `promtool tsdb create-blocks-from openmetrics`, starts /usr/bin/prometheus
on that data in its own temp dir on a free loopback port, and waits until the
API answers with the data. Then it checks, failing (exit 1, a problem a line):
- each job's report (--json): its GPUs, GPU-hours, energy (an estimate where
  the GPU was shared), start and end, the verdict spans and the main verdict's
  fix are what was written: a job whose verdict went too-short -> input-bound,
  one fp32-on-cuda-cores, one idle-held, two sharing a GPU, a Kubernetes job on
  two MIG devices, and one whose series carry exported_job (no honor_labels);
- a job with no series: exit 3, the message naming the job, the URL and the window;
- bad command lines: exit 2; libcurl missing: exit 1, "install libcurl4";
- every query of deploy/kubernetes/grafana-jobs-dashboard.json returns series
  (Grafana's variables filled in as check-dashboard.mjs fills them);
- an HTTP error (a wrong path) and Prometheus down: exit 1, naming the URL and
  what failed.
"""
import argparse, json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.parse, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DASHBOARD = os.path.join(REPO, "deploy", "kubernetes", "grafana-jobs-dashboard.json")
STEP = 15  # the scrape interval of the data written
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through $http_proxy

# ---- the jobs, and what their report must say

GIB = 1 << 30


class Gpu:
    def __init__(self, node, index, uuid, mig=None):
        self.node, self.index, self.uuid, self.mig = node, index, uuid, mig


class Job:
    """A job on its GPUs from `start` for `seconds` (offsets in the data's two hours)."""

    def __init__(self, job, user, scheduler, gpus, start, seconds, util, watts, verdicts, labels=None,
                 shared=False, hopper=False, cpu=(2.0, 8.0), exported=False):
        self.job, self.user, self.scheduler, self.gpus = job, user, scheduler, gpus
        self.start, self.seconds, self.util, self.watts = start, seconds, util, watts
        self.verdicts = verdicts  # [(offset from start, verdict, fix)]
        self.labels, self.shared, self.hopper, self.cpu, self.exported = labels or {}, shared, hopper, cpu, exported


FIX_INPUT = "raise the DataLoader's num_workers from 2 to 8 (gpuenv run --tune sets it)"
FIX_FP32 = "use bf16 autocast, or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True)"
FIX_IDLE = "the job holds the GPU without using it: release it, or find what it waits for"
JOBS = [
    Job("1001", "alice", "slurm", [Gpu("gpu-a", "0", "GPU-a0"), Gpu("gpu-a", "1", "GPU-a1")], 0, 5400, 0.35, 200,
        [(0, "too-short", ""), (300, "input-bound", FIX_INPUT)], hopper=True, cpu=(7.6, 8.0)),
    Job("1002", "bob", "slurm", [Gpu("gpu-a", "2", "GPU-a2")], 600, 3600, 0.95, 400,
        [(0, "fp32-on-cuda-cores", FIX_FP32)], hopper=True),
    Job("1003", "carol", "slurm", [Gpu("gpu-b", "0", "GPU-b0")], 0, 7200, 0.0, 60, [(0, "idle-held", FIX_IDLE)]),
    Job("1004", "dave", "slurm", [Gpu("gpu-b", "1", "GPU-b1")], 1800, 3600, 0.4, 150, [(0, "busy", "")], shared=True),
    Job("pid-4343", "erin", "none", [Gpu("gpu-b", "1", "GPU-b1")], 1800, 3600, 0.4, 150, [(0, "busy", "")],
        labels={"command": "python3"}, shared=True),
    Job("ml/train-0", "frank", "kubernetes", [Gpu("gpu-c", "0", "GPU-c0", "1"), Gpu("gpu-c", "0", "GPU-c0", "2")],
        0, 7200, 0.9, 100, [(0, "busy", "")], labels={"namespace": "ml", "pod": "train-0", "container": "trainer"},
        hopper=True),
    Job("1006", "gina", "slurm", [Gpu("gpu-c", "1", "GPU-c1")], 3600, 3600, 0.8, 300, [(0, "busy", "")], exported=True),
]


def job_labels(j):
    labels = {"job": j.job}
    if j.exported:  # as Prometheus keeps them without honor_labels: the scrape's job wins
        labels = {"job": "gpuenv", "exported_job": j.job}
    labels.update({"user": j.user, "scheduler": j.scheduler})
    labels.update(j.labels)
    return labels


# The exporter's host label: `hostname` (export's default, as dcgm-exporter
# 4.x), `Hostname` on gpu-b as an exporter run with --hostname-label Hostname
# (or one from before the rename) names it; the report reads either.
def host_label(node):
    return {"Hostname" if node == "gpu-b" else "hostname": node}


def gpu_labels(j, g):
    labels = dict(job_labels(j), **host_label(g.node), gpu=g.index, UUID=g.uuid, instance=g.node + ":9400")
    if g.mig:
        labels["GPU_I_ID"] = g.mig
    return labels


# ---- OpenMetrics

def escape(v):
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_line(name, labels, value, t):
    text = ",".join(f'{k}="{escape(v)}"' for k, v in sorted(labels.items()))
    return f"{name}{{{text}}} {value!r} {t}"


def job_samples(j, t0):
    """(family, type, sample name, labels, [(t, value)]) of one job."""
    times = [t0 + j.start + k * STEP for k in range(j.seconds // STEP + 1)]
    out = []
    for g in j.gpus:
        l = gpu_labels(j, g)
        out.append(("gpuenv_job_gpu_seconds", "counter", "gpuenv_job_gpu_seconds_total", l,
                    [(t, float(t - times[0])) for t in times]))
        if not g.mig:  # NVML counts energy per GPU: the exporter serves none for a MIG device
            out.append(("gpuenv_job_energy_joules", "counter", "gpuenv_job_energy_joules_total", l,
                        [(t, float((t - times[0]) * j.watts)) for t in times]))
        out += [("gpuenv_job_gpu_shared", "gauge", "gpuenv_job_gpu_shared", l, [(t, 1.0 if j.shared else 0.0) for t in times]),
                ("gpuenv_job_gpu_utilization_ratio", "gauge", "gpuenv_job_gpu_utilization_ratio", l, [(t, j.util) for t in times]),
                ("gpuenv_job_memory_used_bytes", "gauge", "gpuenv_job_memory_used_bytes", l, [(t, 10.0 * GIB) for t in times]),
                ("gpuenv_job_memory_peak_bytes", "gauge", "gpuenv_job_memory_peak_bytes", l, [(t, 12.0 * GIB) for t in times])]
        if j.hopper:
            out += [(f"gpuenv_job_{n}_active_ratio", "gauge", f"gpuenv_job_{n}_active_ratio", l, [(t, v) for t in times])
                    for n, v in (("sm", 0.3), ("tensor", 0.02), ("fp32", 0.25), ("fp16", 0.0))]
    for node in sorted({g.node for g in j.gpus}):
        l = dict(job_labels(j), **host_label(node), instance=node + ":9400")
        used, allowed = j.cpu
        out += [("gpuenv_job_cpu_cores_used", "gauge", "gpuenv_job_cpu_cores_used", l, [(t, used) for t in times]),
                ("gpuenv_job_cpu_cores_allowed", "gauge", "gpuenv_job_cpu_cores_allowed", l, [(t, allowed) for t in times]),
                ("gpuenv_job_processes", "gauge", "gpuenv_job_processes", l, [(t, 9.0) for t in times]),
                ("gpuenv_job_start_timestamp_seconds", "gauge", "gpuenv_job_start_timestamp_seconds", l,
                 [(t, float(times[0])) for t in times])]
        for i, (offset, verdict, fix) in enumerate(j.verdicts):
            until = j.verdicts[i + 1][0] if i + 1 < len(j.verdicts) else j.seconds + 1
            said = [(t, 1.0) for t in times if offset <= t - times[0] < until]
            out.append(("gpuenv_job_verdict", "gauge", "gpuenv_job_verdict", dict(l, verdict=verdict, fix=fix), said))
    return out


def openmetrics(t0):
    families = {}
    for j in JOBS:
        for family, kind, name, labels, samples in job_samples(j, t0):
            families.setdefault((family, kind), []).append((name, labels, samples))
    lines = []
    for (family, kind), series in families.items():
        lines.append(f"# TYPE {family} {kind}")
        for name, labels, samples in series:
            lines += [series_line(name, labels, v, t) for t, v in samples]
    return "\n".join(lines) + "\n# EOF\n"


# ---- Prometheus

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(port, path, **params):
    url = f"http://127.0.0.1:{port}{path}?" + urllib.parse.urlencode(params)
    with LOOPBACK.open(url, timeout=10) as r:
        return json.loads(r.read().decode())


def start_prometheus(work, t0):
    data = os.path.join(work, "data")
    om = os.path.join(work, "jobs.om")
    with open(om, "w") as f:
        f.write(openmetrics(t0))
    r = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, data],
                       capture_output=True, text=True, cwd=work)
    if r.returncode != 0:
        sys.exit("promtool tsdb create-blocks-from openmetrics failed: " + r.stdout + r.stderr)
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 15s\n")
    port = free_port()
    log = open(os.path.join(work, "prometheus.log"), "w")
    proc = subprocess.Popen(["/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        try:  # ready, with the backfilled blocks loaded
            got = api(port, "/api/v1/query", query="count(gpuenv_job_gpu_seconds_total)", time=t0 + 7200)
            if got["data"]["result"]:
                return proc, port
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    proc.kill()
    sys.exit("Prometheus did not answer with the data: " + open(log.name).read())


# ---- gpuenv report

def report(args, *flags, env=None):
    e = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    e.update(env or {})
    return subprocess.run([args.gpuenv, "report", *flags], capture_output=True, text=True, env=e, timeout=120)


def near(a, b, tol=1e-6):
    return a is not None and abs(a - b) <= tol * max(1.0, abs(b))


def expected_spans(j, t0):
    first, last = t0 + j.start, t0 + j.start + j.seconds // STEP * STEP
    spans = []
    for i, (offset, verdict, fix) in enumerate(j.verdicts):
        to = first + j.verdicts[i + 1][0] if i + 1 < len(j.verdicts) else last
        for node in sorted({g.node for g in j.gpus}):
            spans.append({"node": node, "from": first + offset, "to": to, "verdict": verdict, "fix": fix})
    return spans


def main_verdict(j):
    held = {}
    for i, (offset, verdict, fix) in enumerate(j.verdicts):
        until = j.verdicts[i + 1][0] if i + 1 < len(j.verdicts) else j.seconds
        held[verdict] = (held.get(verdict, (0, ""))[0] + until - offset, fix)
    if len(held) > 1:
        held.pop("too-short", None)
    return max(held.items(), key=lambda kv: kv[1][0])


def job_problems(args, port, t0, j):
    url = f"http://127.0.0.1:{port}"
    r = report(args, "--job", j.job, "--prometheus", url, "--json")
    if r.returncode != 0:
        return [f"report --job {j.job}: exit {r.returncode}: {r.stderr}"]
    got, want, p = json.loads(r.stdout), {}, []
    seconds = j.seconds // STEP * STEP
    watts = j.watts * seconds
    want = {"job": j.job, "user": j.user, "scheduler": j.scheduler, "namespace": j.labels.get("namespace"),
            "pod": j.labels.get("pod"), "container": j.labels.get("container"), "command": j.labels.get("command"),
            "nodes": sorted({g.node for g in j.gpus}), "start": float(t0 + j.start),
            "end": float(t0 + j.start + seconds), "running": False,
            "energy_estimate": j.shared and any(not g.mig for g in j.gpus)}
    for k, v in want.items():
        if got.get(k) != v:
            p.append(f"report --job {j.job}: {k} is {got.get(k)!r}, not {v!r}")
    metered = [g for g in j.gpus if not g.mig]
    for k, v in (("gpu_hours", len(j.gpus) * seconds / 3600), ("energy_j", len(metered) * watts if metered else None)):
        if got.get(k) != v and (v is None or not near(got.get(k), v)):
            p.append(f"report --job {j.job}: {k} is {got.get(k)!r}, not {v!r}")
    gpus = [(g["node"], g["gpu"], g["uuid"], g["mig"]) for g in got.get("gpus", [])]
    if gpus != sorted((g.node, g.index, g.uuid, g.mig) for g in j.gpus):
        p.append(f"report --job {j.job}: GPUs {gpus}")
    for g in got.get("gpus", []):
        if not near(g["utilization"], j.util) or g["shared"] != j.shared or not near(g["memory_peak_bytes"], 12.0 * GIB):
            p.append(f"report --job {j.job}: GPU {g['gpu']}: utilisation {g['utilization']}, shared {g['shared']}, "
                     f"memory peak {g['memory_peak_bytes']}")
        if (g["sm_active"] is not None) != j.hopper or (j.hopper and not near(g["tensor_active"], 0.02)):
            p.append(f"report --job {j.job}: GPU {g['gpu']}: SM {g['sm_active']}, tensor {g['tensor_active']}")
    spans = [{k: s[k] for k in ("node", "from", "to", "verdict", "fix")} for s in got.get("verdicts", [])]
    if spans != expected_spans(j, t0):
        p.append(f"report --job {j.job}: verdicts {spans}, not {expected_spans(j, t0)}")
    verdict, (held, fix) = main_verdict(j)
    mv = got.get("main_verdict") or {}
    if mv.get("verdict") != verdict or mv.get("fix") != fix or not near(mv.get("duration_s"), held):
        p.append(f"report --job {j.job}: main verdict {mv}, not {verdict} for {held} s with fix {fix!r}")
    return p + note_problems(j, got.get("notes", []))


def note_problems(j, notes):
    wanted = []
    if j.util == 0:
        wanted.append(f"This job did not use GPU {j.gpus[0].index} on {j.gpus[0].node}")
    if j.shared:
        wanted.append(f"GPU {j.gpus[0].index} on {j.gpus[0].node} was shared with another job")
    if j.cpu[0] / j.cpu[1] < 0.25:
        wanted.append(f"It used {j.cpu[0]:.1f} of its {j.cpu[1]:.0f} CPU cores")
    if j.cpu[0] / j.cpu[1] > 0.9:
        wanted.append(f"It used {j.cpu[0]:.1f} of its {j.cpu[1]:.0f} CPU cores")
    missing = [w for w in wanted if not any(n.startswith(w) for n in notes)]
    extra = [n for n in notes if not any(n.startswith(w) for w in wanted)]
    return ([f"report --job {j.job}: no note starting {w!r} in {notes}" for w in missing] +
            [f"report --job {j.job}: an unexpected note {n!r}" for n in extra])


def text_problems(args, port):
    r = report(args, "--job", "1001", "--prometheus", f"http://127.0.0.1:{port}")
    want = ["Job 1001 (slurm), user alice\n", "  GPU-hours   3.00 on 2 GPUs\n", "Main verdict: input-bound, 1 h 25 min\n",
            f"  Fix: {FIX_INPUT}\n"]
    return [f"report --job 1001 (text): no {w!r} in:\n{r.stdout}{r.stderr}" for w in want if r.returncode or w not in r.stdout]


def absent_problems(args, port, t0):
    url = f"http://127.0.0.1:{port}"
    p = []
    r = report(args, "--job", "9999", "--prometheus", url)
    if r.returncode != 3 or f"job 9999 has no series at Prometheus {url} between " not in r.stderr:
        p.append(f"report --job 9999 (absent): exit {r.returncode}, {r.stderr!r}")
    end = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 - 86400))
    r = report(args, "--job", "1001", "--prometheus", url, "--end", end, "--since", "1d")
    if r.returncode != 3 or end not in r.stderr:
        p.append(f"report --job 1001 --end {end} --since 1d (a window before it): exit {r.returncode}, {r.stderr!r}")
    r = report(args, "--job", "1001", "--prometheus", url, "--end", str(t0 + 7200), "--since", "3h", "--json")
    if r.returncode != 0 or json.loads(r.stdout or "{}").get("gpu_hours") != 3.0:
        p.append(f"report --job 1001 --end T --since 3h: exit {r.returncode}, {r.stdout[:200]!r} {r.stderr!r}")
    return p


def usage_problems(args, port):
    url = f"http://127.0.0.1:{port}"
    cases = [(["--prometheus", url], 2, "--prometheus needs --job"),
             (["1001", "--job", "1001", "--prometheus", url], 2, "given twice"),
             (["--job", "1001", "--prometheus", "prom:9090"], 2, "is not an http:// or https:// URL"),
             (["--job", "1001", "--prometheus", url, "--since", "fortnight"], 2, "is not a duration"),
             (["--job", "1001", "--prometheus", url, "--end", "yesterday"], 2, "is not a time"),
             (["--job", "1001", "--prometheus", url, "--svg", "x.svg"], 2, "--svg reads the local job store"),
             (["--job", "1", "--since", "1d"], 2, "--since sets the window of --prometheus")]
    p = []
    for flags, code, text in cases:
        r = report(args, *flags)
        if r.returncode != code or text not in r.stderr:
            p.append(f"report {' '.join(flags)}: exit {r.returncode} (not {code}), {r.stderr!r} (no {text!r})")
    r = report(args, "--job", "1001", "--prometheus", url, env={"GPUENV_CURL_LIBRARY": "/nonexistent/libcurl.so.4"})
    if r.returncode != 1 or "install libcurl4" not in r.stderr or url not in r.stderr:
        p.append(f"report without libcurl: exit {r.returncode}, {r.stderr!r}")
    return p


def broken_problems(args, port):
    """An HTTP error (a path Prometheus does not serve) while it runs."""
    url = f"http://127.0.0.1:{port}/no-such-prefix"
    r = report(args, "--job", "1001", "--prometheus", url)
    if r.returncode != 1 or f"Prometheus at {url}" not in r.stderr or "HTTP 404" not in r.stderr:
        return [f"report against {url}: exit {r.returncode}, {r.stderr!r}"]
    return []


def down_problems(args, port):
    url = f"http://127.0.0.1:{port}"
    r = report(args, "--job", "1001", "--prometheus", url)
    if r.returncode != 1 or f"Prometheus at {url}" not in r.stderr or "onnect" not in r.stderr:
        return [f"report with Prometheus down: exit {r.returncode}, {r.stderr!r}"]
    return []


# ---- the jobs dashboard

def dashboard_queries():
    dash = json.load(open(DASHBOARD))
    panels = [q for p in dash["panels"] for q in [p, *p.get("panels", [])] if q.get("type") != "row"]
    return [(p["title"], t["expr"]) for p in panels for t in p.get("targets", [])]


def fill(expr):  # as tests/kubernetes/check-dashboard.mjs fills Grafana's variables
    for k, v in (("$__rate_interval", "1m"), ("$__range", "2h"), ("$__interval", "15s"), ("$node", ".*"),
                 ("$user", ".*"), ("$gpu", ".*")):
        expr = expr.replace(k, v)
    return expr


def dashboard_problems(port, t0):
    p = []
    queries = dashboard_queries()
    if not queries:
        return [f"{DASHBOARD}: no queries"]
    for title, expr in queries:
        try:
            got = api(port, "/api/v1/query", query=fill(expr), time=t0 + 7200)
        except (OSError, ValueError) as e:
            p.append(f'dashboard panel "{title}": `{expr}`: {e}')
            continue
        if got.get("status") != "success" or not got["data"]["result"]:
            p.append(f'dashboard panel "{title}": `{fill(expr)}` returns no series: {json.dumps(got)[:300]}')
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuenv", required=True)
    args = ap.parse_args()
    for tool in ("promtool", "/usr/bin/prometheus"):
        if not shutil.which(tool):
            sys.exit(f"no {tool}: install Debian's prometheus package (make deps)")
    work = tempfile.mkdtemp(prefix="gpuenv-report-prometheus.")
    # Two hours of data ending on the minute an hour ago: in the retention, and before the head block.
    t0 = int(time.time()) // 60 * 60 - 3 * 3600
    problems = []
    proc = None
    try:
        proc, port = start_prometheus(work, t0)
        for j in JOBS:
            problems += job_problems(args, port, t0, j)
        problems += text_problems(args, port) + absent_problems(args, port, t0) + usage_problems(args, port)
        problems += broken_problems(args, port) + dashboard_problems(port, t0)
        proc.terminate()
        proc.wait()
        problems += down_problems(args, port)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    for p in problems:
        print(p)
    print(f"report_prometheus: {len(JOBS)} jobs, {len(dashboard_queries())} dashboard queries: "
          f"{'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
