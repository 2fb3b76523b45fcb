#!/usr/bin/env python3
"""The alerts (deploy/prometheus/gpuenv-alerts.yml) against what `gpuenv export` really
serves (ctest alerts_stand_ins; docs/metrics.md, "Alerts").

  python3 tests/alerts/stand_ins.py --gpuenv build/gpuenv --fake-dir build/fake \
      --kubelet-python /usr/bin/python3 --pb2-dir build/kubelet_py

It starts the exporter on seven stand-in machines (tests/fake_nvml/scenarios/; on one, the
stand-in kubelet assigns two GPUs to a pod; on the two H200 nodes, processes on the GPUs
that a fake host's /proc and cgroup v2 tree attribute to Slurm jobs and to that pod, so that
gpuenv_job_* is served) and scrapes each, then fails (exit 1, each problem on a line) when:
- a series name of the exporter's in a rule is not served, a label a rule matches, groups
  or joins by is not a label of what is served, or a value it matches is never served;
- an input series of the exporter's in tests/alerts/gpuenv-alerts.test.yml is not,
  name and labels exactly, one served as deploy/kubernetes's scrape stores it: with the
  scrape's job (the exporter's own, gpuenv_job_*'s, wins under its honor_labels: true), and
  any instance and node (the target's);
- an alert has no case there that fires it, or none that holds it quiet;
- the rules' scrape job is not the one deploy/kubernetes names;
- a real Prometheus (/usr/bin/prometheus, `make deps`), scraping the seven exporters and
  one target that does not answer as deploy/kubernetes's scrape job does (its
  honor_labels), with the rules loaded, does not hold exactly the
  alerts EXPECTED below, in their state (pending while a `for` runs, else firing).
Before all that it shows that the static checks catch a misspelt name, label and value.
"""
import argparse, json, os, pwd, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(REPO, "deploy", "prometheus", "gpuenv-alerts.yml")
CASES = os.path.join(HERE, "gpuenv-alerts.test.yml")
SCRAPE_CONFIG = os.path.join(REPO, "deploy", "kubernetes", "prometheus-scrape.yaml")
SCENARIOS = os.path.join(REPO, "tests", "fake_nvml", "scenarios")
# A pod holding GPUs 4 and 5 of h200_8_busy, as the stand-in kubelet answers List.
TRAIN = [{"name": "train-0", "namespace": "ml", "containers": [{"name": "trainer", "devices": [
    {"resource_name": "nvidia.com/gpu",
     "device_ids": ["GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d14", "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d15"]}]}]}]
GIB = 1 << 30
# Jobs' processes on the GPUs (pid, GPU, GPU memory, SM %, uid, cgroup, environ), as a Slurm
# node's /proc and cgroup v2 tree and NVML show them. The Slurm users' uids have no name
# here (checked), so their user label is SLURM_JOB_USER's, as on a node whose exporter
# cannot read the site's user directory; the pod's container runs as root.
ALICE, BOB, CAROL = 51001, 51002, 51003
TRAIN_POD_UID = "0c5a7d3e-2b1f-4e8a-9d6c-3f2e1a0b9c87"
TRAIN_CGROUP = ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                f"{TRAIN_POD_UID.replace('-', '_')}.slice/cri-containerd-{'7e' * 32}.scope")


def slurm(pid, job, gpu, mem_gib, sm, uid, user):
    return (pid, gpu, mem_gib * GIB, sm, uid, f"/system.slice/slurmstepd.scope/job_{job}/step_0/user/task_0",
            {"SLURM_JOB_ID": job, "SLURM_STEP_ID": "0", "SLURM_JOB_USER": user})


# h200_8_jobs: jobs 1234 (idle on GPU 3, the GPU at 1 %), 1235 and 1236 (busy on GPUs 4
# and 5); on h200-2 the pod train-0's two ranks on its GPUs 4 and 5 (busy).
SLURM_JOBS = [slurm(41234, "1234", 3, 30, 1, ALICE, "alice"), slurm(41235, "1235", 4, 40, 45, BOB, "bob"),
              slurm(41236, "1236", 5, 50, 55, CAROL, "carol")]
TRAIN_RANKS = [(42001 + i, gpu, 40 * GIB, 45, 0, TRAIN_CGROUP, {"HOSTNAME": "train-0"}) for i, gpu in enumerate((4, 5))]
# The node label of each target (as deploy/kubernetes's scrape gives it) -> its stand-in
# machine, the pods the stand-in kubelet assigns there (None: no kubelet), and the jobs'
# processes on its GPUs (None: no process, no fake /proc).
MACHINES = {"h200-1": ("h200_8_jobs", None, SLURM_JOBS), "h200-2": ("h200_8_jobs", TRAIN, TRAIN_RANKS),
            "h100-1": ("h100_alerts_8", None, None), "h100-2": ("h100_sick_4", None, None),
            "a100-1": ("a100_nvlink_8", None, None), "l4-1": ("gpu_lost_busy", None, None),
            "a100-2": ("a100_mig_busy", None, None)}
# The gpuenv_job_* jobs each stand-in must serve before it is scraped.
JOBS = {"h200-1": {"1234", "1235", "1236"}, "h200-2": {"ml/train-0"}}
TARGET_LABELS = {"instance", "job", "node"}  # the scrape adds them (honor_labels: an exporter's own wins)
PER_TARGET = {"instance", "node"}  # each target's own value
EXPORTER_NAME = re.compile(r"(?<![\w:])((?:gpuenv|DCGM_FI)_\w+)(?![\w:])(\s*\{[^}]*\})?")
MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"')
GROUPING = re.compile(r"\b(?:on|by|ignoring|without)\s*\(([^)]*)\)")
SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+\S+$")
PAIR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

# (alert, node, gpu, reason, pod, job) -> state, on the stand-ins within a minute of the first
# scrape. job: the scrape job's, gpuenv, but on gpuenv_job_* the exporter's (honor_labels).
H200 = {  # h200_8_jobs, with the pod that holds GPUs 4 and 5 on h200-2
    ("GpuXidFellOffTheBus", "4", ""): "firing",  # xid=13,79, taken in the first round
    ("GpuThermalThrottling", "5", "sw_thermal_slowdown"): "pending",
    ("GpuThermalThrottling", "5", "hw_thermal_slowdown"): "pending",
    ("GpuUncorrectableEccErrors", "6", ""): "firing",
    ("GpuRowRemapPending", "6", ""): "pending",
    ("GpuNvlinkLinksDown", "7", ""): "pending",  # 16 of 18
}
EXPECTED = {(alert, node, gpu, reason, "train-0" if node == "h200-2" and gpu in ("4", "5") else "", "gpuenv"): state
            for (alert, gpu, reason), state in H200.items() for node in ("h200-1", "h200-2")}
EXPECTED.update({(alert, node, gpu, reason, "", job): state for (alert, node, gpu, reason, job), state in {
    ("GpuXidApplicationError", "h100-1", "1", "", "gpuenv"): "firing",
    ("GpuXidUncorrectableEcc", "h100-1", "2", "", "gpuenv"): "firing",
    ("GpuXidRowRemapRecorded", "h100-1", "3", "", "gpuenv"): "firing",
    ("GpuXidRowRemapFailed", "h100-1", "4", "", "gpuenv"): "firing",
    ("GpuXidNvlinkError", "h100-1", "5", "", "gpuenv"): "firing",
    ("GpuXidError", "h100-1", "6", "", "gpuenv"): "firing",  # Xid 31
    ("GpuPcieReplaysHigh", "h100-1", "7", "", "gpuenv"): "pending",
    ("GpuThermalThrottling", "h100-2", "0", "sw_thermal_slowdown", "gpuenv"): "pending",
    ("GpuThermalThrottling", "h100-2", "0", "hw_thermal_slowdown", "gpuenv"): "pending",
    ("GpuUncorrectableEccErrors", "h100-2", "1", "", "gpuenv"): "firing",
    ("GpuRowRemapPending", "h100-2", "2", "", "gpuenv"): "pending",
    ("GpuRowRemapFailed", "h100-2", "3", "", "gpuenv"): "firing",
    ("GpuNvlinkLinksDown", "a100-1", "7", "", "gpuenv"): "pending",  # 10 of 12
    ("GpuNvlinkErrors", "a100-1", "6", "", "gpuenv"): "pending",  # link 2's CRC flit errors, 1000 a read
    ("GpuLost", "l4-1", "1", "", "gpuenv"): "pending",
    ("GpuenvExporterDown", "dead", "", "", "gpuenv"): "pending",
    # Job 1234 holds GPU 3 at 1 %; 1235, 1236 and ml/train-0 are busy (for: 30m).
    ("GpuenvJobIdleGpuHeld", "h200-1", "3", "", "1234"): "pending",
}.items()})


# ---- the exporters

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path, pattern, proc, what):
    for _ in range(300):
        time.sleep(0.1)
        m = re.search(pattern, open(path).read())
        if m:
            return m
        if proc.poll() is not None:
            break
    proc.kill()
    sys.exit(f"{what} did not start: " + open(path).read())


def start_kubelet(args, node, pods, work):
    """The stand-in kubelet serving `pods`; its socket."""
    sock, listing = os.path.join(work, node + ".sock"), os.path.join(work, node + ".pods.json")
    with open(listing, "w") as f:
        json.dump(pods, f)
    log = open(os.path.join(work, node + ".kubelet.log"), "w+")
    p = subprocess.Popen([args.kubelet_python, os.path.join(REPO, "tests", "kubelet", "stand_in_kubelet.py"),
                          "--socket", sock, "--pods", listing, "--pb2-dir", args.pb2_dir],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    wait_for(log.name, r"ready", p, "the stand-in kubelet")
    return p, sock


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_host(work, node, processes):
    """A host's /proc and cgroup v2 tree holding `processes` (each one's stat, status, cgroup,
    environ, comm and task/PID/children; its cgroup's cgroup.procs, its job's or pod's
    cpu.stat and cpu.max), as tests/fleet/exporter_jobs.py builds them, and NVML's
    process table of them (tests/fake_nvml/scenario.h): (proc root, cgroup root, table)."""
    root = os.path.join(work, node + ".host")
    proc, cgroup, table = (os.path.join(root, d) for d in ("proc", "cgroup", "processes.txt"))
    write_file(os.path.join(cgroup, "cgroup.controllers"), "cpuset cpu io memory pids\n")  # v2
    write_file(os.path.join(cgroup, "cpuset.cpus.effective"), "0-191\n")
    procs_of = {}
    for pid, gpu, mem, sm, uid, cg, env in processes:
        d = os.path.join(proc, str(pid))
        write_file(os.path.join(d, "task", str(pid), "children"), "")
        write_file(os.path.join(d, "comm"), "python3\n")
        write_file(os.path.join(d, "status"),
                   f"Name:\tpython3\nState:\tS (sleeping)\nTgid:\t{pid}\nPid:\t{pid}\nPPid:\t1\n"
                   f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
                   "Threads:\t1\nCpus_allowed_list:\t0-191\n")
        write_file(os.path.join(d, "cgroup"), f"0::{cg}\n")
        write_file(os.path.join(d, "environ"), "".join(
            f"{k}={v}\0" for k, v in dict({"PATH": "/usr/bin:/bin", "HOME": "/root"}, **env).items()))
        # pid (comm) state ppid pgrp session ... utime stime ...: its own session's leader.
        write_file(os.path.join(d, "stat"), f"{pid} (python3) S 1 {pid} {pid} 0 -1 4194560 1000 0 0 0 500 20 "
                   "0 0 20 0 1 0 12345 104857600 2560 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n")
        procs_of.setdefault(cg, []).append(pid)
    for cg, pids in procs_of.items():
        write_file(cgroup + cg + "/cgroup.procs", "".join(f"{pid}\n" for pid in pids))
        job = cg.split("/step_")[0] if "/job_" in cg else os.path.dirname(cg)  # Slurm's job_N, the pod's slice
        write_file(cgroup + job + "/cpu.max", "800000 100000\n")
        write_file(cgroup + job + "/cpu.stat", "usage_usec 5000000\nuser_usec 4999000\nsystem_usec 1000\n")
    write_file(table, "".join(f"gpu={gpu} pid={pid} mem={mem} sm={sm}\n" for pid, gpu, mem, sm, *_ in processes))
    return proc, cgroup, table


def start_exporter(args, node, work):
    """gpuenv export on the node's stand-in machine, named as the DaemonSet names it
    (NODE_NAME: the hostname label); its processes and port."""
    scenario, pods, processes = MACHINES[node]
    kubelet, sock = start_kubelet(args, node, pods, work) if pods else (None, "")
    env = dict(os.environ, HOME=work, NODE_NAME=node,
               GPUENV_NVML_LIBRARY=os.path.join(args.fake_dir, "libnvidia-ml.so.1"),
               GPUENV_CUDA_LIBRARY=os.path.join(args.fake_dir, "libcuda.so.1"),
               FAKE_NVML_SCENARIO=os.path.join(SCENARIOS, scenario + ".txt"),
               FAKE_CUDA_SCENARIO=os.path.join(SCENARIOS, scenario + ".txt"))
    host, table = [], None
    if processes:
        proc, cgroup, table = fake_host(work, node, processes)
        host = ["--proc-root", proc, "--cgroup-root", cgroup]
        env["FAKE_NVML_PROCESSES"] = table
        # Where a kubelet assigns GPUs, the processes come once its answer is in (no table
        # till then: no process): a round before it would tell the pod's processes by their
        # cgroup alone, as job pod-UID, whose series would stay the --job-retention.
        if pods:
            os.replace(table, table + ".later")
    log = open(os.path.join(work, node + ".log"), "w+")
    p = subprocess.Popen([args.gpuenv, "export", "--listen", "127.0.0.1:0", "--interval", "0.2",
                          "--pod-resources-socket", sock] + host, env=env, stdin=subprocess.DEVNULL, stderr=log)
    try:
        port = int(wait_for(log.name, r"http://127\.0\.0\.1:(\d+)/", p, f"gpuenv export on {scenario}").group(1))
    except SystemExit:
        if kubelet:
            kubelet.kill()
        raise
    if table and pods:
        scrape(port, node, jobs=set())
        os.replace(table + ".later", table)
    return [q for q in (p, kubelet) if q], port


LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through $http_proxy


def get(url):
    with LOOPBACK.open(url, timeout=10) as r:
        return r.read().decode()


def scrape(port, node, jobs=None, seconds=30):
    """The series of one scrape: a set of (name, frozenset of (label, value)), taken once a
    later round than the first seen is served (the first has no rates; a new round's reading
    is younger: gpuenv_exporter_scrape_age_seconds falls), the pod labels are in and every job
    of `jobs` (the node's JOBS) is served; after `seconds` without, what is served then, for
    the checks to tell."""
    pods, jobs = MACHINES[node][1] or [], JOBS.get(node, set()) if jobs is None else jobs
    end, ages = time.monotonic() + seconds, []
    while True:
        series = set()
        for line in get(f"http://127.0.0.1:{port}/metrics").splitlines():
            m = SAMPLE.match(line)
            if m and not line.startswith("#"):
                series.add((m.group(1), frozenset(PAIR.findall(m.group(2) or ""))))
                if m.group(1) == "gpuenv_exporter_scrape_age_seconds":
                    ages.append(float(line.rsplit(" ", 1)[1]))
        new_round = any(b < a for a, b in zip(ages, ages[1:]))
        pods_in = {v for n, l in series if not n.startswith("gpuenv_job_") for k, v in l if k == "pod"}
        jobs_in = {v for n, l in series if n == "gpuenv_job_gpu_utilization_ratio" for k, v in l if k == "job"}
        if (new_round and {p["name"] for p in pods} <= pods_in and jobs <= jobs_in) or time.monotonic() > end:
            return series
        time.sleep(0.05)


# ---- what is served, and what the rules and cases use of it

def shipped_scrape():
    """deploy/kubernetes's scrape job of the exporter, gpuenv: (its job_name, its honor_labels)."""
    for m in re.finditer(r"^([ ]*)- job_name:[ ]*(\S+)[ ]*\n((?:\1 .*\n|[ ]*\n)*)", open(SCRAPE_CONFIG).read(), re.M):
        if m.group(2) == "gpuenv":
            honor = re.search(r"^[ ]*honor_labels:[ ]*(\S+)", m.group(3), re.M)
            return "gpuenv", bool(honor) and honor.group(1) == "true"
    sys.exit(f"no scrape job gpuenv in {SCRAPE_CONFIG}")


def as_stored(labels, scrape_job):
    """A served label set as Prometheus stores it from the scrape job (name, honor_labels),
    less each target's own instance and node: the scrape's job added where the exporter has
    none; where it has one, the exporter's kept under honor_labels, else renamed
    exported_job (and so any instance or node)."""
    name, honor = scrape_job
    out = dict(labels)
    if not honor:
        for k in TARGET_LABELS & out.keys():
            out["exported_" + k] = out.pop(k)
    out.setdefault("job", name)
    return frozenset((k, v) for k, v in out.items() if k not in PER_TARGET)


class Served:
    def __init__(self, series, scrape_job):
        self.series = series
        self.stored = {(name, as_stored(labels, scrape_job)) for name, labels in series}
        self.labels, self.values = {}, {}
        for name, labels in series:
            self.labels.setdefault(name, set()).update(k for k, _ in labels)
            for k, v in labels:
                self.values.setdefault((name, k), set()).add(v)


def yaml_blocks(text, key):
    """The values of `key:` in a YAML file: inline, or a folded (>-) block joined by spaces."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(rf"^(\s*)(?:- )?{key}:\s*(.*)$", line)
        if not m:
            continue
        indent, rest = len(m.group(1)), m.group(2)
        if rest not in (">-", ">", "|", "|-"):
            out.append(rest.strip("'\""))
            continue
        body = []
        for more in lines[i + 1:]:
            if more.strip() and len(more) - len(more.lstrip()) <= indent:
                break
            body.append(more.strip())
        out.append(" ".join(b for b in body if b))
    return out


def matcher_problems(name, selector, served):
    problems = []
    for label, op, value in MATCHER.findall(selector or ""):
        if label not in served.labels[name]:
            problems.append(f"{name}: no served series has the label {label}")
            continue
        known = served.values.get((name, label), set())
        wanted = value.split("|") if op in ("=~", "!~") else [value]
        problems += [f'{name}{{{label}{op}"{value}"}}: {w!r} is never served'
                     for w in wanted if w and re.fullmatch(r"[\w.:-]+", w) and w not in known]
    return problems


def expr_problems(expr, served):
    problems, names = [], set()
    for name, selector in EXPORTER_NAME.findall(expr):
        names.add(name)
        if name not in served.labels:
            problems.append(f"{name}: not served by gpuenv export on any stand-in")
        else:
            problems += matcher_problems(name, selector, served)
    known = TARGET_LABELS.union(*(served.labels.get(n, set()) for n in names)) if names else None
    for group in GROUPING.findall(expr):
        for label in filter(None, (g.strip() for g in group.split(","))):
            if known is not None and label not in known:
                problems.append(f"({group}): {label} is not a label of {', '.join(sorted(names))}")
    return problems


def rules_problems(rules_text, served):
    problems = []
    for expr in yaml_blocks(rules_text, "expr"):
        problems += [f"rule `{expr}`: {p}" for p in expr_problems(expr, served)]
    return problems


def parse_series(text):
    m = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?$", text)
    return m.group(1), frozenset(PAIR.findall(m.group(2) or ""))


def cases_problems(cases_text, served):
    problems = []
    for text in yaml_blocks(cases_text, "series"):
        name, labels = parse_series(text)
        if not EXPORTER_NAME.fullmatch(name):
            continue  # Prometheus' own (up) or kube-state-metrics'
        bare = frozenset((k, v) for k, v in labels if k not in PER_TARGET)
        if (name, bare) not in served.stored:
            problems.append(f"test case series {text}: gpuenv export serves no such series on a stand-in "
                            "(as the scrape stores it: its job, or gpuenv_job_*'s own under honor_labels)")
    return problems


def coverage_problems(rules_text, cases_text):
    fires, quiet = set(), set()
    lines = cases_text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*alertname:\s*(\S+)", line)
        if m and i + 1 < len(lines):
            (quiet if lines[i + 1].strip() == "exp_alerts: []" else fires).add(m.group(1))
    problems = []
    for alert in yaml_blocks(rules_text, "alert"):
        if alert not in fires:
            problems.append(f"{alert}: no case in {os.path.basename(CASES)} fires it")
        if alert not in quiet:
            problems.append(f"{alert}: no case in {os.path.basename(CASES)} holds it quiet")
    return problems


def job_problems(rules_text):
    jobs = set(re.findall(r'\bjob="([^"]*)"', rules_text))
    named = set(re.findall(r"job_name:\s*(\S+)", open(SCRAPE_CONFIG).read()))
    return [f'the rules select job="{j}"; {os.path.relpath(SCRAPE_CONFIG, REPO)} names {sorted(named)}'
            for j in jobs - named]


def static_problems(rules_text, cases_text, served):
    return (rules_problems(rules_text, served) + cases_problems(cases_text, served) +
            coverage_problems(rules_text, cases_text) + job_problems(rules_text))


def self_test(rules_text, cases_text, served):
    """Each of these breakages must be reported, naming what was broken."""
    broken = [  # (in, good, bad, what the report names)
        ("rules", "gpuenv_gpu_nvlink_links_up", "gpuenv_gpu_nvlink_link_up", "gpuenv_gpu_nvlink_link_up"),
        ("rules", 'type="uncorrected"', 'type="uncorrectable"', "uncorrectable"),
        ("rules", "hw_thermal_slowdown|", "hw_thermal_slowdwn|", "hw_thermal_slowdwn"),
        ("rules", "on (instance, name)", "on (instance, model)", "model"),
        ("rules", 'mig=""', 'mgi=""', "mgi"),
        ("rules", 'job="gpuenv"', 'job="gpu-env"', "gpu-env"),
        ("cases", 'pci_bus_id="00000000:DB:00.0"', 'pci_bus_id="0000:DB:00.0"', "0000:DB:00.0"),
        ("cases", "alertname: GpuXidNvlinkError", "alertname: GpuXidNvLinkError", "GpuXidNvlinkError"),
        # gpuenv_job_*'s job is the exporter's (honor_labels): not the scrape's, not exported_job.
        ("cases", 'job="1235"', 'job="gpuenv"', 'job="gpuenv",user="bob"'),
        ("cases", 'job="1234"', 'job="gpuenv",exported_job="1234"', 'exported_job="1234"'),
        # ... and a series of the GPU's carries the scrape's job.
        ("cases", 'job="gpuenv",gpu="1",name="NVIDIA L4"', 'job="1234",gpu="1",name="NVIDIA L4"', 'job="1234",gpu="1"')]
    problems = []
    for where, good, bad, named in broken:
        text = rules_text if where == "rules" else cases_text
        if good not in text:
            problems.append(f"self-test: {good!r} is no longer in the {where}; update the self-test")
            continue
        rules = text.replace(good, bad) if where == "rules" else rules_text
        cases = text.replace(good, bad) if where == "cases" else cases_text
        if not any(named in p for p in static_problems(rules, cases, served)):
            problems.append(f"self-test: {good!r} -> {bad!r} in the {where} is not reported")
    return problems


# ---- a real Prometheus

def prometheus_config(work, ports, dead_port):
    """Every target in the one scrape job, as deploy/kubernetes's scrape job (its name, its
    honor_labels) with each target's node label."""
    name, honor = shipped_scrape()
    targets = "".join(f"      - targets: ['127.0.0.1:{port}']\n        labels: {{node: {node}}}\n"
                      for node, port in ports.items())
    targets += f"      - targets: ['127.0.0.1:{dead_port}']\n        labels: {{node: dead}}\n"
    path = os.path.join(work, "prometheus.yml")
    with open(path, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"rule_files: ['{RULES}']\n"
                f"scrape_configs:\n  - job_name: {name}\n    honor_labels: {str(honor).lower()}\n"
                "    static_configs:\n" + targets)
    return path


def alerts_now(port):
    try:
        data = json.loads(get(f"http://127.0.0.1:{port}/api/v1/alerts"))
    except (OSError, ValueError):
        return None
    return {tuple(a["labels"].get(k, "") for k in ("alertname", "node", "gpu", "reason", "pod", "job")): a["state"]
            for a in data["data"]["alerts"]}


def prometheus_problems(work, ports):
    if not os.access("/usr/bin/prometheus", os.X_OK):
        return ["no /usr/bin/prometheus: run `make deps` (Debian's prometheus package)"]
    port = free_port()
    prom = subprocess.Popen(["/usr/bin/prometheus", f"--config.file={prometheus_config(work, ports, free_port())}",
                             f"--storage.tsdb.path={work}/data", f"--web.listen-address=127.0.0.1:{port}",
                             "--log.level=warn"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
    try:
        got, end = None, time.monotonic() + 60
        while time.monotonic() < end and got != EXPECTED:
            time.sleep(1)
            got = alerts_now(port)
    finally:
        prom.terminate()
        prom.wait()
    if got is None:
        return ["Prometheus did not answer: " + open(os.path.join(work, "prometheus.log")).read()]
    missing = [f"Prometheus: {k} is {got.get(k, 'not raised')}, not {v}" for k, v in EXPECTED.items() if got.get(k) != v]
    return missing + [f"Prometheus: {k} is {v}, unexpected" for k, v in got.items() if k not in EXPECTED]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuenv", required=True)
    ap.add_argument("--fake-dir", required=True)
    ap.add_argument("--kubelet-python", default="/usr/bin/python3", help="a python3 with grpcio")
    ap.add_argument("--pb2-dir", required=True, help="where protoc put pod_resources_pb2.py")
    args = ap.parse_args()
    rules_text, cases_text = open(RULES).read(), open(CASES).read()
    for uid, user in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol"), (0, "root")):
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = None
        if name != (user if uid == 0 else None):
            sys.exit(f"uid {uid} is {name or 'nameless'} here, so a stand-in job's user label would not be "
                     f"{user} (a Slurm job's uid must have no name, for SLURM_JOB_USER's to be used)")
    work = tempfile.mkdtemp(prefix="gpuenv-alerts.")
    exporters = {}
    try:
        for node in MACHINES:
            exporters[node] = start_exporter(args, node, work)
        ports = {node: port for node, (_, port) in exporters.items()}
        served = Served(set().union(*(scrape(ports[n], n) for n in MACHINES)), shipped_scrape())
        problems = self_test(rules_text, cases_text, served)
        problems += static_problems(rules_text, cases_text, served)
        problems += prometheus_problems(work, ports)
    finally:
        for procs, _ in exporters.values():
            for p in procs:
                p.terminate()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
    for p in problems:
        print(p)
    print(f"alerts: {len(yaml_blocks(rules_text, 'alert'))} alerts, {len(served.series)} served series "
          f"on {len(MACHINES)} stand-ins: {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
