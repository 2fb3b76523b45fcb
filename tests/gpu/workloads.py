"""Issue 40's workloads, the loops users run (tests/gpu/workloads/), judged:
for each, in a store of its own and in one call,
  1. plain python, then `gpuenv run`: gpuenv never slows it;
  2. the watched run's verdict is the expected one and names its evidence;
  3. three `gpuenv run --tune`: none slower than untuned, runs 2 and 3 apply
     the same settings, and settings stay applied only where they helped;
  4. per workload: --tune reaches Trainer's loader; --tune=+precision steps
     aside, saying why, where the script already runs bf16.
Every check is a claim (tests/gpu/claims.py).
  GPUENV=.devbin/gpuenv OUT=/tmp/x python3 tests/gpu/workloads.py [NAME ...]"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claims  # noqa: E402

WORKDIR = os.path.join(HERE, "workloads")
GPUENV = os.path.abspath(os.environ.get("GPUENV", os.path.join(HERE, "../../build/gpuenv")))
PY = os.environ.get("PYTHON", "python3")
NOISE = 0.05  # run-to-run spread allowed before a run counts as slower (tune_search's floor)

# name: script, the verdicts that are right, what else to check.
WORKLOADS = {
    "imagenet": {"script": "imagenet_resnet50.py", "verdicts": ["input-bound"], "tune_gain": 1.3},
    "trainer": {"script": "hf_trainer_bf16.py", "verdicts": ["input-bound"], "tune_gain": 1.3,
                "tune_reaches": "gpuenv --tune: TrainingArguments", "precision_aside": True},
    "accelerate": {"script": "accelerate_clm.py", "verdicts": ["busy"]},
    "nanogpt": {"script": "nanogpt.py", "verdicts": ["busy"], "precision_aside": True},
}


def run(argv, env, log):
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=WORKDIR, env=env, capture_output=True, text=True, timeout=420)
    wall = time.perf_counter() - t0
    with open(log, "w") as f:
        f.write("$ %s\n--- exit %d, %.1f s\n--- stdout\n%s\n--- stderr\n%s" % (
            " ".join(argv), r.returncode, wall, r.stdout, r.stderr))
    line = {}
    for text in reversed(r.stdout.strip().splitlines()):
        if text.startswith("{"):
            line = json.loads(text)
            break
    return {"rc": r.returncode, "wall": wall, "per_s": line.get("per_s", 0.0), "line": line,
            "gpuenv_lines": [x for x in r.stderr.splitlines() if "gpuenv" in x]}


def last_job(env):
    r = subprocess.run([GPUENV, "report", "--json"], cwd=WORKDIR, env=env, capture_output=True, text=True)
    jobs = json.loads(r.stdout)["jobs"] if r.returncode == 0 else []
    return jobs[0] if jobs else {}


def applied(job):
    t = job.get("tuned")
    return json.dumps(t, sort_keys=True) if t else "nothing"


def judge(name, spec, out):
    section = "workload " + name
    env = dict(os.environ, PYTHONUNBUFFERED="1", GPUENV_CACHE_ROOT=tempfile.mkdtemp(prefix="gpuenv-wl-"))
    script = [PY, spec["script"]] + spec.get("args", [])
    log = lambda tag: os.path.join(out, "wl-%s-%s.log" % (name, tag))
    plain = run(script, env, log("plain"))
    watched = run([GPUENV, "run", "--"] + script, env, log("run"))
    job = last_job(env)
    unit = watched["line"].get("unit") or plain["line"].get("unit", "")
    ok = plain["rc"] == 0 and watched["rc"] == 0 and watched["per_s"] >= (1 - 0.03) * plain["per_s"] > 0
    claims.add(section, "gpuenv run never slows it (paired with plain python)", ">= 0.97x plain",
               "%.0f vs %.0f %s (%.2fx); exits %d, %d" % (watched["per_s"], plain["per_s"], unit,
                                                          watched["per_s"] / plain["per_s"] if plain["per_s"] else 0,
                                                          plain["rc"], watched["rc"]), ok)
    v = job.get("verdict", {})
    evidence = v.get("evidence", "")
    claims.add(section, "the verdict is right and names its evidence", "/".join(spec["verdicts"]) + ", with figures",
               "%s: %s" % (v.get("name", "none"), evidence[:160]),
               v.get("name") in spec["verdicts"] and any(c.isdigit() for c in evidence))
    tuned = []
    for i in (1, 2, 3):
        r = run([GPUENV, "run", "--tune", "--"] + script, env, log("tune%d" % i))
        r["applied"] = applied(last_job(env))
        tuned.append(r)
    base = watched["per_s"]
    speeds = ", ".join("%.0f (%s)" % (r["per_s"], r["applied"]) for r in tuned)
    claims.add(section, "--tune is never slower than untuned (3 runs)", ">= %.2fx untuned each" % (1 - NOISE),
               "untuned %.0f; tuned %s" % (base, speeds),
               base > 0 and all(r["rc"] == 0 and r["per_s"] >= (1 - NOISE) * base for r in tuned))
    helped = base > 0 and tuned[-1]["per_s"] > (1 + NOISE) * base
    converged = tuned[1]["applied"] == tuned[2]["applied"]
    claims.add(section, "--tune converges in three runs and keeps only what helps",
               "runs 2 and 3 apply the same; settings only when > %.2fx untuned" % (1 + NOISE),
               "run 3: %s at %.2fx" % (tuned[2]["applied"], tuned[-1]["per_s"] / base if base else 0),
               converged and (helped or tuned[2]["applied"] == "nothing"))
    if spec.get("tune_gain"):
        best = max(r["per_s"] for r in tuned)
        claims.add(section, "--tune removes the input bottleneck", ">= %.1fx untuned" % spec["tune_gain"],
                   "%.2fx (best of 3)" % (best / base if base else 0), base > 0 and best >= spec["tune_gain"] * base)
    if spec.get("tune_reaches"):
        said = [x for x in tuned[0]["gpuenv_lines"] if spec["tune_reaches"] in x]
        claims.add(section, "--tune reaches the loader Trainer builds", "stderr: " + spec["tune_reaches"],
                   said[0][:160] if said else "not said", bool(said))
    if spec.get("precision_aside"):
        r = run([GPUENV, "run", "--tune=+precision", "--"] + script, env, log("precision"))
        aside = [x for x in r["gpuenv_lines"] if "left alone" in x]
        wrapped = [x for x in r["gpuenv_lines"] if "bf16 autocast around" in x]
        claims.add(section, "--tune=+precision steps aside and says why (the script runs bf16 itself)",
                   "a 'left alone' line, no autocast added",
                   (aside[0] if aside else "no 'left alone' line")[:160] + ("; but: " + wrapped[0][:80] if wrapped else ""),
                   r["rc"] == 0 and bool(aside) and not wrapped)
    with open(os.path.join(out, "wl-%s.json" % name), "w") as f:
        json.dump({"plain": plain, "run": watched, "job": job, "tuned": tuned}, f, indent=1, default=str)


def main(names):
    out = os.environ.get("OUT") or "/tmp/gpuenv-gpu"
    os.makedirs(out, exist_ok=True)
    for name in names or list(WORKLOADS):
        try:
            judge(name, WORKLOADS[name], out)
        except Exception as e:  # a crash is a failed claim, and the next workload still runs
            claims.add("workload " + name, "the workload ran", "no exception", repr(e)[:200], False)


if __name__ == "__main__":
    main(sys.argv[1:])
