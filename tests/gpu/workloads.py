"""Issue 40's workloads, the loops users run (tests/gpu/workloads/), judged.
Each in a store of its own, as one series (about 5-6 minutes on one H100 or
H200: one workload fits one 10-minute device call):
  A. PAIRS alternating pairs, plain python then `gpuenv run`: gpuenv never
     slows it (the medians), and every watched run's verdict is the expected
     one with figures as its evidence;
  B. three `gpuenv run --tune`, alternating with untuned `gpuenv run
     --no-tune` (the last of A, then two more): --tune never slower (the
     medians, and the slowest of each), runs 2 and 3 apply the same settings,
     and settings stay only where they helped;
  C. per workload: --tune's gain (Trainer), that it reaches Trainer's loader,
     what the verdict's fix says (ImageNet), and --tune=+precision stepping
     aside (Trainer, nanoGPT: they run bf16 themselves) or applying bf16
     autocast (the fp32 accelerate loop).
One run of an input-bound loop varies by +-20 % (docs/performance.md, issue
40), so no claim rests on one pair. Every check is a claim (claims.py); the
end is one table of this run's claims, and the exit status is 1 on a fail.
  OUT=/tmp/x GPUENV_BIN=.devbin/gpuenv python3 tests/gpu/workloads.py [NAME ...]
NAME: imagenet trainer accelerate nanogpt (default: all, about 22 minutes).
PAIRS (default 3) sets A's pairs; BUDGET_S (default 560) the seconds the
call may take: a run that would end past it is not started, and a failed
claim says so (the table still prints)."""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claims  # noqa: E402

WORKDIR = os.path.join(HERE, "workloads")
ROOT = os.path.dirname(os.path.dirname(HERE))


def gpuenv_bin():
    """GPUENV_BIN, else GPUENV (run.sh sets both), else build/gpuenv, else the portable .devbin/gpuenv."""
    for p in (os.environ.get("GPUENV_BIN"), os.environ.get("GPUENV")):
        if p:
            return os.path.abspath(p)
    built = os.path.join(ROOT, "build/gpuenv")
    return built if os.path.exists(built) else os.path.join(ROOT, ".devbin/gpuenv")


def stale_hook():
    """The python/ files that differ from the hook beside the binary (GPUENV_PYTHON_DIR where set)."""
    beside = os.environ.get("GPUENV_PYTHON_DIR") or os.path.join(os.path.dirname(gpuenv_bin()), "python")
    mine = os.path.join(ROOT, "python")
    if not os.path.isdir(beside) or os.path.realpath(beside) == os.path.realpath(mine):
        return []
    read = lambda p: open(p, "rb").read() if os.path.exists(p) else None
    return [f for f in sorted(os.listdir(mine)) if f.endswith(".py")
            and read(os.path.join(mine, f)) != read(os.path.join(beside, f))]


PY = os.environ.get("PYTHON", "python3")
NOISE = 0.05       # the tuning search's floor: settings stay only where they gave more than this
TUNE_RUNS = 3

# Per workload: the script and its (shortened) arguments; the verdicts that
# are right; `floor`: gpuenv run's median against plain's, and --tune's
# against untuned (a run of an input-bound loop varies +-20 %, so its floor
# is wider); what else to check; `minutes`: the series' expected length.
WORKLOADS = {
    "imagenet": {"script": "imagenet_resnet50.py", "args": ["--steps", "32", "--warmup", "8"],
                 "verdicts": ["input-bound"], "floor": 0.90,
                 # 4 workers and pin_memory already: --tune has no default to fill, so the claim is the fix's
                 "fix_says": r"num_workers=(\d+)|cheaper", "loop_workers": 4, "minutes": 6},
    "trainer": {"script": "hf_trainer_bf16.py", "args": ["--steps", "60"], "verdicts": ["input-bound"],
                "floor": 0.95, "tune_gain": 1.3, "tune_reaches": "gpuenv --tune: TrainingArguments",
                "precision": "aside", "minutes": 5},
    "accelerate": {"script": "accelerate_clm.py", "args": ["--steps", "50", "--warmup", "8"],
                   "verdicts": ["busy"], "floor": 0.97, "precision": "applies", "minutes": 5},
    "nanogpt": {"script": "nanogpt.py", "args": ["--iters", "40"], "verdicts": ["busy"], "floor": 0.97,
                "precision": "aside", "minutes": 6},
}


class OutOfTime(Exception):
    pass


class Series:
    """Runs one workload's commands in its own store, keeping each run's figures."""

    def __init__(self, name, spec, out, deadline):
        self.name, self.spec, self.out, self.deadline = name, spec, out, deadline
        self.gpuenv = gpuenv_bin()
        self.env = dict(os.environ, PYTHONUNBUFFERED="1",
                        GPUENV_CACHE_ROOT=tempfile.mkdtemp(prefix="gpuenv-wl-%s-" % name))
        self.script = [PY, spec["script"]] + spec.get("args", [])
        self.longest = 0.0
        self.runs = {}

    def run(self, tag, gpuenv_args=None):
        """One run: plain python (gpuenv_args None) or `gpuenv ARGS -- script`."""
        left = self.deadline - time.monotonic()
        if left < 1.15 * self.longest + 5:
            raise OutOfTime("%s %s not started: %.0f s left of BUDGET_S, a run takes %.0f s"
                            % (self.name, tag, left, self.longest))
        argv = self.script if gpuenv_args is None else [self.gpuenv] + gpuenv_args + ["--"] + self.script
        t0 = time.monotonic()
        try:
            r = subprocess.run(argv, cwd=WORKDIR, env=self.env, capture_output=True, text=True, timeout=left)
            rc, stdout, stderr = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, stdout, stderr = 124, e.stdout or "", e.stderr or ""
            stdout, stderr = [x.decode(errors="replace") if isinstance(x, bytes) else x for x in (stdout, stderr)]
        wall = time.monotonic() - t0
        self.longest = max(self.longest, wall)
        with open(os.path.join(self.out, "wl-%s-%s.log" % (self.name, tag)), "w") as f:
            f.write("$ %s\n--- exit %d, %.1f s\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(argv), rc, wall, stdout, stderr))
        line = {}
        for text in reversed(stdout.strip().splitlines()):
            if text.startswith("{"):
                try:
                    line = json.loads(text)
                except ValueError:
                    pass
                break
        run = {"tag": tag, "rc": rc, "wall": round(wall, 1), "per_s": float(line.get("per_s") or 0),
               "unit": line.get("unit", ""), "gpuenv_lines": [x for x in stderr.splitlines() if "gpuenv" in x]}
        if gpuenv_args is not None:
            job = self.last_job()
            run["applied"] = job.get("tuned") or "nothing"
            v = job.get("verdict") or {}
            run["verdict"] = {k: v.get(k, "") for k in ("name", "evidence", "fix")}
        self.runs[tag] = run
        sys.stderr.write("  %s %-10s %8.1f %s  %5.1f s  exit %d%s\n" % (
            self.name, tag, run["per_s"], run["unit"], wall, rc,
            "  applied " + run["applied"] if "--tune" in " ".join(gpuenv_args or []) else ""))
        return run

    def last_job(self):
        r = subprocess.run([self.gpuenv, "report", "--json"], cwd=WORKDIR, env=self.env, capture_output=True,
                           text=True)
        try:
            jobs = json.loads(r.stdout)["jobs"] if r.returncode == 0 else []
        except ValueError:
            jobs = []
        return jobs[0] if jobs else {}


def collect(series, pairs):
    """A, B and C in their order; OutOfTime leaves the rest unrun."""
    for i in range(1, pairs + 1):
        series.run("plain%d" % i)
        series.run("run%d" % i, ["run"])
    for i in range(1, TUNE_RUNS + 1):
        series.run("tune%d" % i, ["run", "--tune"])
        if i < TUNE_RUNS:
            series.run("notune%d" % i, ["run", "--no-tune"])
    if series.spec.get("precision"):
        series.run("precision", ["run", "--tune=+precision"])


def median(xs):
    return statistics.median(xs) if xs else 0.0


def figures(runs):
    return ", ".join("%.0f" % r["per_s"] for r in runs)


def judge_series(spec, runs, pairs):
    """The claims of one series, from its runs by tag: [(claim, threshold, measured, ok)]. Pure."""
    out = []
    floor = spec["floor"]
    get = lambda prefix, n: [runs[t] for t in ("%s%d" % (prefix, i) for i in range(1, n + 1)) if t in runs]
    plain, watched = get("plain", pairs), get("run", pairs)
    unit = next((r["unit"] for r in watched + plain if r.get("unit")), "")
    ok_rc = lambda rs: all(r["rc"] == 0 for r in rs)

    # A. never slower, by the medians of alternating pairs
    complete = len(plain) == pairs and len(watched) == pairs
    ratio = median([r["per_s"] for r in watched]) / median([r["per_s"] for r in plain]) if median(
        [r["per_s"] for r in plain]) else 0
    out.append(("gpuenv run never slows it (%d alternating pairs, medians)" % pairs, ">= %.2fx plain" % floor,
                "%s vs plain %s %s: %.2fx%s" % (figures(watched), figures(plain), unit, ratio,
                                                 "" if ok_rc(plain + watched) else "; an exit was not 0"),
                complete and ok_rc(plain + watched) and ratio >= floor))
    names = [r["verdict"]["name"] or "none" for r in watched]
    last = watched[-1]["verdict"] if watched else {"name": "none", "evidence": ""}
    right = bool(watched) and all(n in spec["verdicts"] for n in names) and all(
        any(c.isdigit() for c in r["verdict"]["evidence"]) for r in watched)
    out.append(("the verdict is right and names its evidence (every watched run)",
                "/".join(spec["verdicts"]) + ", with figures",
                "%s: %s" % (" ".join(names) or "none", last["evidence"][:140]), right))
    if spec.get("fix_says"):
        m = re.search(spec["fix_says"], last.get("fix", ""))
        helps = bool(m) and (m.group(1) is None or int(m.group(1)) > spec.get("loop_workers", 0))
        out.append(("the verdict's fix says what would help (--tune cannot: the loop passes its loader's arguments)",
                    "more workers than its %d, or cheaper per-sample work" % spec.get("loop_workers", 0),
                    last.get("fix", "")[:140] or "no fix", helps))

    # B. --tune against untuned, alternating: the last plain gpuenv run, then each --no-tune
    tuned = get("tune", TUNE_RUNS)
    untuned = watched[-1:] + get("notune", TUNE_RUNS - 1)
    base = median([r["per_s"] for r in untuned])
    mt = median([r["per_s"] for r in tuned])
    slowest_ok = bool(tuned) and min(r["per_s"] for r in tuned) >= floor * min(r["per_s"] for r in untuned or [{"per_s": 0}])
    out.append(("--tune never slower than untuned (3 runs alternating with --no-tune)",
                ">= %.2fx untuned: the medians and the slowest" % floor,
                "tuned %s vs untuned %s %s: %.2fx" % (figures(tuned), figures(untuned), unit, mt / base if base else 0),
                len(tuned) == TUNE_RUNS and ok_rc(tuned + untuned) and base > 0 and mt >= floor * base and slowest_ok))
    applied = [r["applied"] for r in tuned]
    kept = applied[-1] if applied else "not run"
    kept_runs = [r["per_s"] for r in tuned if r["applied"] == kept]
    helped = kept == "nothing" or (base > 0 and median(kept_runs) > (1 + NOISE) * base)
    out.append(("--tune converges in three runs and keeps only what helps",
                "runs 2 and 3 apply the same; settings only where > %.2fx untuned" % (1 + NOISE),
                " / ".join(applied) + ("; kept at %.2fx" % (median(kept_runs) / base) if base and kept != "nothing" else ""),
                len(tuned) == TUNE_RUNS and applied[1] == applied[2] and helped))
    if spec.get("tune_gain"):
        out.append(("--tune removes the input bottleneck", ">= %.1fx untuned (medians)" % spec["tune_gain"],
                    "%.2fx" % (mt / base if base else 0), base > 0 and mt >= spec["tune_gain"] * base))
    if spec.get("tune_reaches"):
        said = [x for x in (tuned[0]["gpuenv_lines"] if tuned else []) if spec["tune_reaches"] in x]
        out.append(("--tune reaches the loader Trainer builds", "stderr: " + spec["tune_reaches"],
                    said[0][:140] if said else "not said", bool(said)))

    # C. --tune=+precision
    mode, p = spec.get("precision"), runs.get("precision")
    if mode:
        lines = p["gpuenv_lines"] if p else []
        aside = [x for x in lines if "left alone" in x]
        wrapped = [x for x in lines if "bf16 autocast around" in x]
        fast = bool(p) and p["rc"] == 0 and mt > 0 and p["per_s"] >= floor * mt
        speed = "%.0f %s (%.2fx --tune's)" % (p["per_s"], unit, p["per_s"] / mt if mt else 0) if p else "not run"
        if mode == "aside":
            out.append(("--tune=+precision steps aside and says why (the script runs bf16 itself)",
                        "a 'left alone' line, no autocast added, >= %.2fx --tune's speed" % floor,
                        "%s; %s%s" % (speed, (aside[0] if aside else "no 'left alone' line")[:110],
                                      "; but: " + wrapped[0][:60] if wrapped else ""),
                        fast and bool(aside) and not wrapped))
        else:
            out.append(("--tune=+precision applies bf16 autocast to the fp32 loop",
                        "an autocast line, not left alone, >= %.2fx --tune's speed" % floor,
                        "%s; %s%s" % (speed, (wrapped[0] if wrapped else "no autocast line")[:110],
                                      "; but: " + aside[0][:60] if aside else ""),
                        fast and bool(wrapped) and not aside))
    return out


def main(names):
    out = os.environ.get("OUT") or "/tmp/gpuenv-gpu"
    os.makedirs(out, exist_ok=True)
    pairs = int(os.environ.get("PAIRS", "3"))
    deadline = time.monotonic() + float(os.environ.get("BUDGET_S", "560"))
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        sys.stderr.write("unknown workload %s; the workloads are %s\n" % (", ".join(unknown), " ".join(WORKLOADS)))
        return 2
    sys.stderr.write("workloads: gpuenv %s, %d pairs, series of about %s minutes\n" % (
        gpuenv_bin(), pairs, " + ".join("%s %d" % (n, WORKLOADS[n]["minutes"]) for n in names or WORKLOADS)))
    stale = stale_hook()
    if stale:
        sys.stderr.write("workloads: WARNING: the hook beside gpuenv is not this tree's python/ (%s differ): "
                         "copy python/*.py there, or the runs test an older hook\n" % ", ".join(stale))
    rows = []
    for name in names or list(WORKLOADS):
        section = "workload " + name
        series = Series(name, WORKLOADS[name], out, deadline)
        t0 = time.monotonic()
        stopped = None
        try:
            collect(series, pairs)
        except OutOfTime as e:
            stopped = str(e)
        except Exception as e:  # a crash is a failed claim, and the next workload still runs
            stopped = "crashed: %r" % (e,)
        minutes = (time.monotonic() - t0) / 60
        try:
            got = judge_series(WORKLOADS[name], series.runs, pairs) if series.runs else []
        except Exception as e:  # partial or odd figures: a failed claim, not a lost table
            got = [("its runs could be judged", "readable figures", repr(e)[:160], False)]
        got.append(("the series ran to its end", "every run, within BUDGET_S",
                    "%d runs in %.1f min%s" % (len(series.runs), minutes, "; " + stopped if stopped else ""),
                    stopped is None))
        for claim, threshold, measured, ok in got:
            claims.add(section, claim, threshold, measured, ok, echo=False)
            rows.append(claims.row(section, claim, threshold, measured, ok))
        with open(os.path.join(out, "wl-%s.json" % name), "w") as f:
            json.dump({"runs": series.runs, "minutes": round(minutes, 2), "stopped": stopped}, f, indent=1)
    return claims.table(rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
