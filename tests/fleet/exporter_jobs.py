#!/usr/bin/env python3
"""`gpuenv export`'s per-job series end to end (ctest fleet.exporter_jobs; issue 38,
docs/metrics.md "Jobs"), through a real Prometheus.

  python3 tests/fleet/exporter_jobs.py --gpuenv build/gpuenv --fake-dir build/fake

It builds a fake host under its temporary directory: a /proc tree (each process's stat,
status, cgroup, environ, comm and task/PID/children) and a cgroup v2 tree (cpu.stat,
cpu.max, cgroup.procs), and a process table for the stand-in NVML
(tests/fake_nvml/scenarios/fleet_4.txt, four H200s):
  GPU 0  job 101 (Slurm cgroup, user alice): util 10% while its process burns ~1 core
         (a thread here advances its utime and its cgroup's usage_usec): input-bound;
  GPU 1  job 102 (Slurm, told by SLURM_JOB_ID in its environ only): util 97%, tensor
         pipe 1%, FP32 pipe 72%: fp32-on-cuda-cores;
  GPU 2  job 103 (Slurm cgroup): util 0% while holding 20 GiB: idle-held;
  GPU 3  job 104 (Slurm cgroup, sm=60) and job 105 (GPUENV_JOB_ID, no scheduler, sm=20)
         sharing the GPU, with a third process that has no /proc entry (sm=0): it must be
         served as job "unknown", scheduler "unknown", never dropped.
It starts `gpuenv export --interval 0.25 --proc-root --cgroup-root --job-retention 2` and
a real Prometheus (/usr/bin/prometheus) scraping it every 250 ms with honor_labels, waits
until no job's verdict is too-short, and checks through Prometheus's API: each job's
verdict, labels and CPU; the shared GPU's flags; the energy split (104:105 = 3:1) and,
on every GPU, that its jobs' energy (104 + 105 on GPU 3) adds up to the increase of its
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION over the same window (within one energy STEP, the
same number of STEPs on every GPU: the jobs' snapshot may trail by a round); the
hpc_job label on DCGM_FI_DEV_GPU_UTIL; that every series names the node ($NODE_NAME)
under one label, `hostname`, the DCGM_FI_* and gpuenv_job_* alike. Then `gpuenv report --job ID --prometheus URL
--json` for jobs 101 and 104 must agree with Prometheus (and name that node). Last, job 102's process leaves
the table: its series must stay for the retention (2 s) and be gone from /metrics within
the retention plus 8 rounds. Exit 0: passed; 1: failed (each failed check on a line).
"""
import argparse, json, os, pwd, re, shutil, socket, subprocess, sys, tempfile, threading, time
import urllib.parse, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SCENARIO = os.path.join(REPO, "tests", "fake_nvml", "scenarios", "fleet_4.txt")
INTERVAL = 0.25  # the exporter's --interval
NODE = "fleet-node-7"  # its $NODE_NAME: the node's name on every series
RETENTION = 2.0  # its --job-retention
GIB = 1 << 30
CLK_TCK = os.sysconf("SC_CLK_TCK")
SLURM_SCOPE = "/system.slice/gpuenvnode_slurmstepd.scope"
# Each GPU's energy STEP (mJ more at each read), as fleet_4.txt says.
ENERGY_STEP = {"0": 150000, "1": 170000, "2": 20000, "3": 160000}
PAIR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')  # a label of the text format
JOB_102 = re.compile(r'[{,]job="102"[,}]')
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through $http_proxy

failures = []


def check(name, ok, detail):
    print(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failures.append(name)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_uids(n):
    """n uids with no name on this machine: a job's user then comes from SLURM_JOB_USER."""
    out, uid = [], 61001
    while len(out) < n:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            out.append(uid)
        uid += 1
    return out


def write_atomic(path, text):
    """Written beside, then renamed over: a reader sees the old file or the new, never half."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".new")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def get(url, timeout=10):
    with LOOPBACK.open(url, timeout=timeout) as r:
        return r.read().decode()


# ---- the fake host: /proc and the cgroup tree

class Process:
    def __init__(self, pid, job, gpu, mem, sm, uid, cgroup, env, comm="python3", in_proc=True):
        self.pid, self.job, self.gpu, self.mem, self.sm, self.uid = pid, job, gpu, mem, sm, uid
        self.cgroup, self.env, self.comm, self.in_proc = cgroup, env, comm, in_proc
        self.utime = 500  # ticks


class FakeHost:
    def __init__(self, work):
        self.proc = os.path.join(work, "proc")
        self.cgroup = os.path.join(work, "cgroup")
        self.table = os.path.join(work, "processes.txt")
        os.makedirs(self.proc)
        os.makedirs(self.cgroup)
        # The root of a cgroup v2 tree (process_facts.cc tells v2 by this file).
        write_atomic(os.path.join(self.cgroup, "cgroup.controllers"), "cpuset cpu io memory pids\n")
        write_atomic(os.path.join(self.cgroup, "cpuset.cpus.effective"), "0-15\n")

    def stat_line(self, p):
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        # utime stime ...: its own session's leader, so its tree's root is itself.
        rest = "0 0 20 0 1 0 12345 104857600 2560 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0"
        return f"{p.pid} ({p.comm}) S 1 {p.pid} {p.pid} 0 -1 4194560 1000 0 0 0 {p.utime} 20 {rest}\n"

    def add_process(self, p):
        if not p.in_proc:
            return
        d = os.path.join(self.proc, str(p.pid))
        os.makedirs(os.path.join(d, "task", str(p.pid)))
        write_atomic(os.path.join(d, "task", str(p.pid), "children"), "")
        write_atomic(os.path.join(d, "comm"), p.comm + "\n")
        write_atomic(os.path.join(d, "status"),
                     f"Name:\t{p.comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{p.pid}\nPid:\t{p.pid}\n"
                     f"PPid:\t1\nUid:\t{p.uid}\t{p.uid}\t{p.uid}\t{p.uid}\nGid:\t{p.uid}\t{p.uid}\t{p.uid}\t{p.uid}\n"
                     "Threads:\t1\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n")
        write_atomic(os.path.join(d, "cgroup"), f"0::{p.cgroup}\n")
        write_atomic(os.path.join(d, "environ"),
                     "".join(f"{k}={v}\0" for k, v in dict({"PATH": "/usr/bin:/bin", "HOME": "/home/x"},
                                                           **p.env).items()))
        self.write_stat(p)
        if "/job_" in p.cgroup:  # a Slurm job's cgroup: .../job_N/step_0/user/task_0
            job_dir = self.cgroup + p.cgroup.split("/step_")[0]
            task_dir = self.cgroup + p.cgroup
            os.makedirs(task_dir, exist_ok=True)
            write_atomic(os.path.join(task_dir, "cgroup.procs"), f"{p.pid}\n")
            write_atomic(os.path.join(job_dir, "cgroup.procs"), "")
            write_atomic(os.path.join(job_dir, "cpu.max"), "200000 100000\n")  # 2 cores
            self.write_cpu_stat(job_dir, 5_000_000)

    def write_stat(self, p):
        write_atomic(os.path.join(self.proc, str(p.pid), "stat"), self.stat_line(p))

    @staticmethod
    def write_cpu_stat(job_dir, usage_usec):
        write_atomic(os.path.join(job_dir, "cpu.stat"),
                     f"usage_usec {usage_usec}\nuser_usec {usage_usec - 1000}\nsystem_usec 1000\n"
                     "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")

    def write_table(self, processes):
        write_atomic(self.table, "# gpu=INDEX pid=PID mem=BYTES sm=PERCENT (scenario.h)\n" +
                     "".join(f"gpu={p.gpu} pid={p.pid} mem={p.mem} sm={p.sm}\n" for p in processes))


class Burner(threading.Thread):
    """Job 101's process using `cores` CPUs: its utime in /proc/PID/stat and its cgroup's
    usage_usec advance with the wall clock (by rename, every 20 ms)."""

    def __init__(self, host, p, cores):
        super().__init__(daemon=True)
        self.host, self.p, self.cores = host, p, cores
        self.job_dir = host.cgroup + p.cgroup.split("/step_")[0]
        self.stop = threading.Event()
        self.error = None

    def run(self):
        t0, utime0 = time.monotonic(), self.p.utime
        try:
            while not self.stop.wait(0.02):
                used = (time.monotonic() - t0) * self.cores
                self.p.utime = utime0 + int(used * CLK_TCK)
                self.host.write_stat(self.p)
                self.host.write_cpu_stat(self.job_dir, 5_000_000 + int(used * 1e6))
        except OSError as e:
            self.error = e


def processes():
    alice, bob, carol, dave, erin, frank = free_uids(6)
    step = "/step_0/user/task_0"
    return [
        Process(41001, "101", 0, 40 * GIB, 9, alice, f"{SLURM_SCOPE}/job_101{step}",
                {"SLURM_JOB_ID": "101", "SLURM_STEP_ID": "0", "SLURM_JOB_USER": "alice"}),
        Process(41002, "102", 1, 60 * GIB, 90, bob, f"/user.slice/user-{bob}.slice/session-4.scope",
                {"SLURM_JOB_ID": "102", "SLURM_STEP_ID": "0", "SLURM_JOB_USER": "bob"}),
        Process(41003, "103", 2, 20 * GIB, 0, carol, f"{SLURM_SCOPE}/job_103{step}",
                {"SLURM_JOB_ID": "103", "SLURM_JOB_USER": "carol"}),
        Process(41004, "104", 3, 30 * GIB, 60, dave, f"{SLURM_SCOPE}/job_104{step}",
                {"SLURM_JOB_ID": "104", "SLURM_JOB_USER": "dave"}),
        Process(41005, "105", 3, 10 * GIB, 20, erin, f"/user.slice/user-{erin}.slice/session-9.scope",
                {"GPUENV_JOB_ID": "105"}),
        # NVML lists it; /proc has no such PID (another PID namespace, or it just exited).
        Process(41006, "unknown", 3, 2 * GIB, 0, frank, "", {}, in_proc=False),
    ]


# ---- the exporter and Prometheus

def wait_for_log(path, pattern, proc, what, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        m = re.search(pattern, open(path).read())
        if m:
            return m
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit(f"FAIL: {what} did not start: " + open(path).read()[-3000:])


def start_exporter(args, host, work):
    env = dict(os.environ, HOME=work, GPUENV_NVML_LIBRARY=os.path.join(args.fake_dir, "libnvidia-ml.so.1"),
               GPUENV_CUDA_LIBRARY=os.path.join(args.fake_dir, "libcuda.so.1"),
               FAKE_NVML_SCENARIO=SCENARIO, FAKE_CUDA_SCENARIO=SCENARIO, FAKE_NVML_PROCESSES=host.table,
               NODE_NAME=NODE)
    log = os.path.join(work, "export.log")
    p = subprocess.Popen([args.gpuenv, "export", "--listen", "127.0.0.1:0", "--interval", str(INTERVAL),
                          "--proc-root", host.proc, "--cgroup-root", host.cgroup,
                          "--job-retention", str(RETENTION), "--pod-resources-socket", ""],
                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    port = int(wait_for_log(log, r"http://127\.0\.0\.1:(\d+)/", p, "gpuenv export").group(1))
    return p, port, log


def start_prometheus(work, exporter_port):
    if not os.access("/usr/bin/prometheus", os.X_OK):
        sys.exit("FAIL: no /usr/bin/prometheus: run `make deps` (Debian's prometheus package)")
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: fleet\n    honor_labels: true\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{exporter_port}']\n")
    port = free_port()
    log = os.path.join(work, "prometheus.log")
    p = subprocess.Popen(["/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={work}/data",
                          f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            if "Ready" in get(f"http://127.0.0.1:{port}/-/ready", timeout=2):
                return p, port, log
        except OSError:
            pass
        if p.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit("FAIL: Prometheus did not start: " + open(log).read()[-3000:])


class Prometheus:
    def __init__(self, port):
        self.url = f"http://127.0.0.1:{port}"

    def query(self, expr, at=None):
        """An instant query's vector: a list of (labels, value)."""
        q = {"query": expr}
        if at is not None:
            q["time"] = f"{at:.3f}"
        data = json.loads(get(f"{self.url}/api/v1/query?" + urllib.parse.urlencode(q)))
        if data.get("status") != "success":
            raise RuntimeError(f"Prometheus: {expr}: {data}")
        return [(r["metric"], float(r["value"][1])) for r in data["data"]["result"]]

    def by_job(self, expr, at):
        return {labels.get("job"): (labels, v) for labels, v in self.query(expr, at)}

    def by_gpu_job(self, expr, at):
        return {(labels.get("gpu"), labels.get("job")): v for labels, v in self.query(expr, at)}


# ---- the checks

JOBS = ("101", "102", "103", "104", "105", "unknown")


def wait_for_verdicts(prom, deadline_s=60):
    """The time all jobs were first served, and when none was too-short any more."""
    first_all, end = None, time.monotonic() + deadline_s
    verdicts = {}
    while time.monotonic() < end:
        try:
            verdicts = {l.get("job"): l.get("verdict") for l, _ in prom.query("gpuenv_job_verdict")}
        except (OSError, ValueError, RuntimeError):
            verdicts = {}
        if all(j in verdicts for j in JOBS):
            first_all = first_all or time.time()
            if all(verdicts[j] != "too-short" for j in JOBS):
                return first_all, time.time()
        time.sleep(0.2)
    sys.exit(f"FAIL: within {deadline_s} s the jobs' verdicts did not all leave too-short: {verdicts}")


def check_first_sight(port, deadline_s=30):
    """Straight from /metrics: every job is served from its first rounds, too-short then."""
    print("the exporter's first rounds")
    end, seen = time.monotonic() + deadline_s, {}
    while time.monotonic() < end and not all(j in seen for j in JOBS):
        for line in scrape(port).splitlines():
            m = re.match(r"gpuenv_job_verdict\{(.*)\} \S+$", line)
            labels = dict(PAIR.findall(m.group(1))) if m else {}
            if "job" in labels and labels["job"] not in seen:
                seen[labels["job"]] = labels.get("verdict")
        time.sleep(0.05)
    check("every job served", all(j in seen for j in JOBS), f"{sorted(seen)}")
    check("too-short at first", all(v == "too-short" for v in seen.values()),
          f"the first verdicts served: {sorted(set(seen.values()))} (6 rounds needed)")


def check_jobs(prom, t):
    print("verdicts and labels, as Prometheus holds them")
    v = prom.by_job("gpuenv_job_verdict", t)
    want = {"101": ("input-bound", "slurm", "alice"), "102": ("fp32-on-cuda-cores", "slurm", "bob"),
            "103": ("idle-held", "slurm", "carol")}
    for job, (verdict, scheduler, user) in want.items():
        labels = v.get(job, ({}, 0))[0]
        check(f"job {job}", (labels.get("verdict"), labels.get("scheduler"), labels.get("user")) ==
              (verdict, scheduler, user),
              f"verdict={labels.get('verdict')} scheduler={labels.get('scheduler')} user={labels.get('user')}"
              f" (fix: {labels.get('fix', '')[:70]}...)")
        check(f"job {job} fix", bool(labels.get("fix")), "a fix is named")
    for job, scheduler in (("104", "slurm"), ("105", "none"), ("unknown", "unknown")):
        labels = v.get(job, ({}, 0))[0]
        check(f"job {job}", labels.get("scheduler") == scheduler and labels.get("verdict") not in (None, "too-short"),
              f"scheduler={labels.get('scheduler')} verdict={labels.get('verdict')}")
    check("job 105's user", v.get("105", ({}, 0))[0].get("user", "").isdigit(),
          f"user={v.get('105', ({}, 0))[0].get('user')} (a uid with no name here: its digits)")

    shared = prom.by_gpu_job("gpuenv_job_gpu_shared", t)
    check("GPU 3 shared", all(shared.get(("3", j)) == 1 for j in ("104", "105", "unknown")),
          f"gpu_shared of 104, 105, unknown on GPU 3: {[shared.get(('3', j)) for j in ('104', '105', 'unknown')]}")
    check("GPUs 0-2 not shared", all(shared.get((g, j)) == 0 for g, j in (("0", "101"), ("1", "102"), ("2", "103"))),
          f"{[shared.get(k) for k in (('0', '101'), ('1', '102'), ('2', '103'))]}")
    procs = prom.by_job("gpuenv_job_processes", t)
    check("the unknown process", procs.get("unknown", ({}, 0))[1] == 1,
          f"gpuenv_job_processes{{job=\"unknown\"}} = {procs.get('unknown', ({}, None))[1]}")
    mem = prom.by_gpu_job("gpuenv_job_memory_used_bytes", t)
    check("the unknown process's memory", mem.get(("3", "unknown")) == 2 * GIB,
          f"{mem.get(('3', 'unknown'))} bytes on GPU 3")
    check("job 103's memory", mem.get(("2", "103")) == 20 * GIB, f"{mem.get(('2', '103'))} bytes on GPU 2")

    # The last round's figure jitters with when the rounds fell between the burner's
    # writes: its mean over the last 2 s.
    cpu = prom.by_job("avg_over_time(gpuenv_job_cpu_cores_used[2s])", t)
    allowed = prom.by_job("gpuenv_job_cpu_cores_allowed", t)
    used = cpu.get("101", ({}, None))[1]
    check("job 101's CPU", used is not None and 0.8 <= used <= 1.25 and allowed.get("101", ({}, 0))[1] == 2,
          f"{used} cores used (mean of 2 s) of {allowed.get('101', ({}, None))[1]} allowed (cpu.max 200000 100000)")
    fp32 = prom.by_gpu_job("gpuenv_job_fp32_active_ratio", t)
    tensor = prom.by_gpu_job("gpuenv_job_tensor_active_ratio", t)
    check("job 102's pipes", abs(fp32.get(("1", "102"), -1) - 0.72) < 1e-6 and abs(tensor.get(("1", "102"), -1) - 0.01) < 1e-6,
          f"fp32 {fp32.get(('1', '102'))}, tensor {tensor.get(('1', '102'))}")
    check("no GPM figures on a shared GPU", ("3", "104") not in fp32 and ("3", "105") not in fp32,
          "gpuenv_job_fp32_active_ratio absent for jobs 104 and 105")
    return v


def check_energy(prom, t1, t2):
    print(f"energy over the window of {t2 - t1:.1f} s")
    jobs1 = prom.by_gpu_job("gpuenv_job_energy_joules_total", t1)
    jobs2 = prom.by_gpu_job("gpuenv_job_energy_joules_total", t2)
    dcgm1 = {l["gpu"]: v for l, v in prom.query("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", t1)}
    dcgm2 = {l["gpu"]: v for l, v in prom.query("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", t2)}
    # A scrape's jobs come from the tracker's newest round, which may trail the GPUs'
    # newest by one: at either end of the window the jobs' sum may lag by one read, the
    # same read on every GPU. So on each GPU the difference is a whole number of its
    # STEPs, at most one, and the same number on all four.
    reads = {}
    for gpu, jobs_there in (("0", ["101"]), ("1", ["102"]), ("2", ["103"]), ("3", ["104", "105"])):
        step = ENERGY_STEP[gpu]
        dcgm = dcgm2.get(gpu, 0) - dcgm1.get(gpu, 0)  # mJ
        jobs = sum(jobs2.get((gpu, j), 0) - jobs1.get((gpu, j), 0) for j in jobs_there) * 1000
        k = (jobs - dcgm) / step
        reads[gpu] = round(k)
        check(f"GPU {gpu} energy", dcgm >= 5 * step and abs(k) <= 1 + 1e-6 and abs(k - round(k)) < 1e-6,
              f"jobs {'+'.join(jobs_there)} {jobs / 1000:.1f} J, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "
              f"+{dcgm / 1000:.1f} J (one read: {step / 1000:.0f} J; {k:+.3f} reads)")
    check("the same rounds on every GPU", len(set(reads.values())) == 1,
          f"reads the jobs' sums lag by: {reads}")
    e104, e105, eu = (jobs2.get(("3", j), 0) for j in ("104", "105", "unknown"))
    check("GPU 3 split by SM samples (60:20)", e105 > 0 and abs(e104 / e105 - 3) < 0.05 and eu == 0,
          f"job 104 {e104:.1f} J, job 105 {e105:.1f} J (ratio {e104 / e105 if e105 else float('nan'):.3f}), "
          f"unknown {eu:.1f} J")


def check_hpc_job(prom, t):
    print("hpc_job on dcgm-exporter's series")
    got = {}
    for labels, _ in prom.query("DCGM_FI_DEV_GPU_UTIL", t):
        got.setdefault(labels.get("gpu"), set()).add(labels.get("hpc_job"))
    for gpu, job in (("0", "101"), ("1", "102"), ("2", "103"), ("3", "104")):
        check(f"GPU {gpu} hpc_job", got.get(gpu) == {job}, f"DCGM_FI_DEV_GPU_UTIL{{gpu=\"{gpu}\"}} hpc_job {got.get(gpu)}")
    return got


def check_host_label(prom, t):
    """One label names the node on every series: export's default, `hostname` (dcgm-exporter
    4.x's), on the DCGM_FI_* and the gpuenv_job_* series alike; none carries `Hostname`."""
    print("the node's label")
    for expr in ("DCGM_FI_DEV_GPU_UTIL", "gpuenv_job_processes", "gpuenv_job_gpu_seconds_total", "gpuenv_job_verdict"):
        got = prom.query(expr, t)
        hosts = sorted({labels.get("hostname", "") for labels, _ in got})
        check(f"{expr} hostname", len(got) > 0 and hosts == [NODE] and not any("Hostname" in l for l, _ in got),
              f"{len(got)} series, hostname {hosts}")


def report_available(gpuenv):
    r = subprocess.run([gpuenv, "report", "--help"], capture_output=True, text=True)
    return r.returncode == 0 and "--prometheus" in r.stdout


def check_report(args, work, prom, t, verdicts):
    print("gpuenv report --job ID --prometheus URL --json")
    env = dict(os.environ, HOME=work, GPUENV_CACHE_ROOT=os.path.join(work, "cache"), NO_PROXY="127.0.0.1",
               no_proxy="127.0.0.1")
    energy = prom.by_job("sum by (job) (gpuenv_job_energy_joules_total)", t)
    for job, shared in (("101", False), ("104", True)):
        r = subprocess.run([args.gpuenv, "report", "--job", job, "--prometheus", prom.url, "--json",
                            "--since", "10m", "--end", f"{t:.3f}"], env=env, capture_output=True, text=True,
                           timeout=60)
        if not check(f"report {job} exit", r.returncode == 0, f"status {r.returncode} {r.stderr.strip()[:300]}"):
            continue
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            check(f"report {job} JSON", False, r.stdout[:300])
            continue
        want = verdicts.get(job, ({}, 0))[0].get("verdict")
        main = (rep.get("main_verdict") or {}).get("verdict")
        last = rep["verdicts"][-1]["verdict"] if rep.get("verdicts") else None
        check(f"report {job} verdict", main == want and last == want,
              f"main {main}, last span {last}; Prometheus {want}")
        prom_j = energy.get(job, ({}, None))[1]
        got = rep.get("energy_j")
        check(f"report {job} energy", prom_j is not None and got is not None and abs(got - prom_j) <= 1e-6 * prom_j + 1e-3,
              f"{got} J; Prometheus {prom_j} J")
        gpus = rep.get("gpus", [])
        check(f"report {job} GPUs", [g.get("shared") for g in gpus] == [shared] and rep.get("energy_estimate") == shared,
              f"shared {[g.get('shared') for g in gpus]}, energy_estimate {rep.get('energy_estimate')}")
        check(f"report {job} labels", (rep.get("job"), rep.get("scheduler"), rep.get("user")) ==
              (job, "slurm", {"101": "alice", "104": "dave"}[job]),
              f"job {rep.get('job')} scheduler {rep.get('scheduler')} user {rep.get('user')}")
        check(f"report {job} node", rep.get("nodes") == [NODE], f"nodes {rep.get('nodes')}")


def scrape(port):
    return get(f"http://127.0.0.1:{port}/metrics")


def check_dashboard(prom, t):
    """Every query of the jobs dashboard returns series from this Prometheus, scraping the live
    exporter (report_prometheus.py checks them on backfilled hours as well)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from report_prometheus import dashboard_queries, fill
    queries = dashboard_queries()
    check("jobs dashboard has queries", len(queries) > 0, f"{len(queries)} queries")
    for title, expr in queries:
        q = fill(expr).replace("[2h:1m]", "[2h:1s]")  # seconds of data here: sample the subqueries finer
        try:
            got = prom.query(q, at=t)
        except (OSError, RuntimeError, ValueError) as e:
            check(f"dashboard {title}", False, f"`{q}`: {e}")
            continue
        check(f"dashboard {title}", len(got) > 0, f"{len(got)} series from `{q[:100]}`")


def check_retention(host, port, procs):
    print(f"job 102's process leaves the table (--job-retention {RETENTION:g})")
    host.write_table([p for p in procs if p.job != "102"])
    left = time.monotonic()
    gone, ended_seen, early_gone, hpc_left = None, False, None, None
    deadline = left + RETENTION + 8 * INTERVAL
    while time.monotonic() < deadline + 5:  # a little past, to report how late it was
        body = scrape(port)
        done = time.monotonic()
        series = [l for l in body.splitlines() if l.startswith("gpuenv_job_") and JOB_102.search(l)]
        if 'hpc_job="102"' not in body and hpc_left is None:
            hpc_left = done - left
        if any(l.startswith("gpuenv_job_processes{") and l.endswith(" 0") for l in series):
            ended_seen = True
        if not series:
            if done < left + RETENTION - 0.1 and early_gone is None:
                early_gone = done - left
            gone = done - left
            break
        time.sleep(0.05)
    check("kept for the retention", early_gone is None,
          "still served while ended" if early_gone is None else f"gone after only {early_gone:.2f} s")
    check("served as ended", ended_seen, 'gpuenv_job_processes{job="102"} 0 was served while it was kept')
    check("gone after it", gone is not None and gone <= RETENTION + 8 * INTERVAL,
          f"every gpuenv_job_* series of job 102 gone {gone:.2f} s after its process left" if gone is not None
          else "still served")
    check("hpc_job 102 gone", hpc_left is not None and hpc_left <= 4 * INTERVAL + 1,
          f"no DCGM series with hpc_job=\"102\" {hpc_left:.2f} s after" if hpc_left is not None else "still served")
    served = {dict(PAIR.findall(l)).get("job") for l in scrape(port).splitlines()
              if l.startswith("gpuenv_job_gpu_seconds_total{")}
    check("the others stay", served == {"101", "103", "104", "105", "unknown"},
          f"gpuenv_job_gpu_seconds_total served for jobs {sorted(served)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuenv", required=True)
    ap.add_argument("--fake-dir", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    started, started_wall = time.monotonic(), time.time()
    work = tempfile.mkdtemp(prefix="gpuenv-fleet-jobs.")
    host = FakeHost(work)
    procs = processes()
    for p in procs:
        host.add_process(p)
    host.write_table(procs)
    burner = Burner(host, procs[0], cores=1.0)
    burner.start()
    children, logs = [], []
    try:
        exporter, port, log = start_exporter(args, host, work)
        children.append(exporter), logs.append(log)
        check_first_sight(port)
        prometheus, prom_port, log = start_prometheus(work, port)
        children.append(prometheus), logs.append(log)
        prom = Prometheus(prom_port)
        first_all, settled = wait_for_verdicts(prom)
        print(f"every job served {first_all - started_wall:.1f} s in; "
              f"no verdict too-short {settled - first_all:.1f} s later")
        # A window of at least 12 rounds for the energy, from a time Prometheus had
        # every job (first_all) to one it has scraped up to.
        time.sleep(max(0.0, first_all + 3.3 - time.time()))
        t = time.time() - 0.3
        verdicts = check_jobs(prom, t)
        check_energy(prom, first_all, t)
        check_hpc_job(prom, t)
        check_host_label(prom, t)
        check_dashboard(prom, t)
        if check("gpuenv report --prometheus", report_available(args.gpuenv), "in `gpuenv report --help`"):
            check_report(args, work, prom, t, verdicts)
        check_retention(host, port, procs)
        check("the burner thread", burner.error is None, f"{burner.error or 'kept job 101 busy'}")
    except BaseException:  # a wait that gave up (sys.exit), or a bug here: the logs too
        failures.append("aborted")
        raise
    finally:
        burner.stop.set()
        burner.join()
        for c in reversed(children):
            c.terminate()
            try:
                c.wait(10)
            except subprocess.TimeoutExpired:
                c.kill()
                c.wait()
        if failures:
            for log in logs:
                print(f"--- {os.path.basename(log)} (last lines)")
                print("\n".join(open(log).read().splitlines()[-15:]))
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - started
    if failures:
        print(f"FAIL: fleet.exporter_jobs: {len(failures)} checks failed ({', '.join(failures)}) in {took:.1f} s")
        return 1
    print(f"PASS: fleet.exporter_jobs ({took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
