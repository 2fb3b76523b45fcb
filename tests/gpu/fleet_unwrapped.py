"""On a real GPU (issue 38): jobs nobody wrapped, judged by the exporter alone.

`gpuenv export` runs on the machine's own NVML and /proc; each workload runs as
a user starts it (plain python3, its own session, no gpuenv), and the exporter's
/metrics is read every second while it runs. Then the same workload runs under
`gpuenv run`, whose stored verdict is read back with `gpuenv report --json`.
Claims (tests/gpu/claims.py, section "fleet"):
- the input-bound ResNet-50 loop (resnet_input_bound.py: augmentation in
  __getitem__, no DataLoader workers) is input-bound by the exporter, as by run;
- the fp32 GPT-2 loop (gpt_train.py --fp32: the script asks for "highest") is
  fp32-on-cuda-cores by the exporter, as by run;
- the job's gpuenv_job_energy_joules_total over its life is within 5 % of the
  NVML counter's increase (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ) over the
  same rounds.

  GPUENV=.devbin/gpuenv OUT=/tmp/out python3 tests/gpu/fleet_unwrapped.py [--seconds 45]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claims  # noqa: E402

SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

# name, the verdict it should get, argv, the environment its `gpuenv run` keeps (the
# fp32 loop is kept fp32 there: gpuenv keeps a variable the user set, and TF32 is
# what its plan would otherwise turn on).
WORKLOADS = [
    ("resnet input-bound", "input-bound", [os.path.join(HERE, "resnet_input_bound.py")], {}),
    ("gpt2 fp32", "fp32-on-cuda-cores", [os.path.join(HERE, "gpt_train.py"), "--fp32", "--steps", "5"],
     {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "0"}),
]


def scrape(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out.append((m.group(1), dict(LABEL.findall(m.group(2))), float(m.group(3))))
    return out


def start_exporter(gpuenv, out):
    err = open(os.path.join(out, "fleet_export.err"), "w+")
    p = subprocess.Popen([gpuenv, "export", "--listen", "127.0.0.1:0", "--interval", "1"], stderr=err)
    for _ in range(300):
        err.seek(0)
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", err.read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    err.seek(0)
    sys.exit("the exporter did not start: " + err.read())


def watch(port, job, proc):
    """Scrapes every second while `proc` runs: the verdicts seen, and for each
    scrape with the job present its energy and the GPU's counter (J)."""
    verdicts, energy = [], []
    while proc.poll() is None:
        series = scrape(port)
        v = [s for s in series if s[0] == "gpuenv_job_verdict" and s[1].get("job") == job]
        if v:
            verdicts.append(v[0][1]["verdict"])
        e = [s for s in series if s[0] == "gpuenv_job_energy_joules_total" and s[1].get("job") == job]
        if e:
            uuid = e[0][1].get("UUID")
            counter = [s[2] / 1000 for s in series
                       if s[0] == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" and s[1].get("UUID") == uuid]
            if counter:
                energy.append((e[0][2], counter[0]))
        time.sleep(1)
    return verdicts, energy


def unwrapped(port, name, argv, seconds, out):
    log = open(os.path.join(out, "fleet_%s.out" % name.replace(" ", "_")), "w")
    proc = subprocess.Popen([sys.executable] + argv + ["--seconds", str(seconds)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    verdicts, energy = watch(port, "pid-%d" % proc.pid, proc)
    return proc.returncode, verdicts, energy


def under_run(gpuenv, argv, env, seconds, out):
    subprocess.run([gpuenv, "run", "--", sys.executable] + argv + ["--seconds", str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(out, "fleet_run.err"), "a"),
                   env={**os.environ, **env})
    report = subprocess.run([gpuenv, "report", "--json"], capture_output=True, text=True)
    try:
        jobs = json.loads(report.stdout)["jobs"]
        return jobs[0]["verdict"]["name"] if jobs else "none"
    except (ValueError, KeyError, IndexError) as e:
        return "no report (%s)" % e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=45)
    a = ap.parse_args()
    gpuenv = os.environ.get("GPUENV", "build/gpuenv")
    out = os.environ.get("OUT", "/tmp/gpuenv-gpu")
    os.makedirs(out, exist_ok=True)
    exporter, port = start_exporter(gpuenv, out)
    try:
        for name, want, argv, run_env in WORKLOADS:
            code, verdicts, energy = unwrapped(port, name, argv, a.seconds, out)
            last = verdicts[-1] if verdicts else "never served"
            claims.add("fleet", "unwrapped %s: the exporter's verdict" % name, want,
                       "%s (exit %d; %d scrapes)" % (last, code, len(verdicts)), code == 0 and last == want)
            if len(energy) >= 2:
                job_j = energy[-1][0] - energy[0][0]
                nvml_j = energy[-1][1] - energy[0][1]
                off = abs(job_j - nvml_j) / nvml_j if nvml_j > 0 else 1
                claims.add("fleet", "unwrapped %s: job energy vs NVML's counter" % name, "within 5 %",
                           "%.0f J vs %.0f J (%.1f %%)" % (job_j, nvml_j, 100 * off), off <= 0.05)
            else:
                claims.add("fleet", "unwrapped %s: job energy vs NVML's counter" % name, "within 5 %",
                           "no energy series", False)
            run_verdict = under_run(gpuenv, argv, run_env, a.seconds, out)
            claims.add("fleet", "%s: gpuenv run's verdict is the exporter's" % name, last, run_verdict,
                       run_verdict == last)
    finally:
        exporter.terminate()
        exporter.wait(timeout=10)


if __name__ == "__main__":
    main()
