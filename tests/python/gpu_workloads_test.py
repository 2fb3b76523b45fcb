"""tests/gpu/workloads.py without a GPU: its judgement on figures like the
ones the H100 and H200 gave (issue 40), and its series end to end with a
stand-in gpuenv and a stand-in workload (the order of the runs, the one
table, the exit status, the time budget). Writes only under its temp dir."""
import contextlib
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
import workloads  # noqa: E402


def run(tag, per_s, applied=None, verdict="input-bound", lines=(), rc=0):
    r = {"tag": tag, "rc": rc, "wall": 30, "per_s": per_s, "unit": "images/s", "gpuenv_lines": list(lines)}
    if not tag.startswith("plain"):
        r["applied"] = applied or "nothing"
        r["verdict"] = {"name": verdict, "evidence": "busy 21 % over 30 s", "fix": "make the per-sample work cheaper"}
    return r


def series(plain, watched, tuned, untuned, applied, precision=None):
    runs = {}
    for i, (p, w) in enumerate(zip(plain, watched), 1):
        runs["plain%d" % i], runs["run%d" % i] = run("plain%d" % i, p), run("run%d" % i, w)
    for i, (t, a) in enumerate(zip(tuned, applied), 1):
        runs["tune%d" % i] = run("tune%d" % i, t, a)
    for i, u in enumerate(untuned, 1):
        runs["notune%d" % i] = run("notune%d" % i, u)
    if precision:
        runs["precision"] = precision
    return runs


def verdicts(claims_):
    return {c[0].split(" (")[0]: c[3] for c in claims_}


IMAGENET = workloads.WORKLOADS["imagenet"]
TRAINER = workloads.WORKLOADS["trainer"]


class Judgement(unittest.TestCase):
    def test_noise_of_one_pair_decides_nothing_the_medians_do(self):
        # One H100 call: 471 plain against 383 under gpuenv (0.81x), then 370 plain, 399 gpuenv.
        runs = series([471, 370, 400], [383, 462, 399], [387, 388, 381], [380, 390], ["nothing"] * 3)
        got = verdicts(workloads.judge_series(IMAGENET, runs, 3))
        self.assertTrue(got["gpuenv run never slows it"])
        slowed = series([471, 370, 400], [377, 296, 320], [387, 388, 381], [380, 390], ["nothing"] * 3)
        self.assertFalse(verdicts(workloads.judge_series(IMAGENET, slowed, 3))["gpuenv run never slows it"])

    def test_thresholds_are_per_workload(self):
        runs = series([100, 100, 100], [93, 93, 93], [93] * 3, [93, 93], ["nothing"] * 3)
        self.assertTrue(verdicts(workloads.judge_series(IMAGENET, runs, 3))["gpuenv run never slows it"])
        self.assertFalse(verdicts(workloads.judge_series(TRAINER, runs, 3))["gpuenv run never slows it"])

    def test_tune_converges_and_keeps_only_what_helped(self):
        key = "--tune converges in three runs and keeps only what helps"
        w15, w11, w8 = ("num_workers=%d,pin_memory=True,persistent_workers=True" % n for n in (15, 11, 8))
        cases = [
            ("the H200's Trainer series: 15, 11, 8", [w15, w11, w8], [141, 140, 139], False),
            ("settled on 11", [w15, w11, w11], [141, 140, 139], True),
            ("nothing applied", ["nothing"] * 3, [73, 74, 72], True),
            ("kept, but it did not help", [w15, w15, w15], [74, 75, 73], False),
        ]
        for what, applied, speeds, want in cases:
            runs = series([68, 70, 69], [73, 72, 73], speeds, [73, 74], applied)
            self.assertEqual(verdicts(workloads.judge_series(TRAINER, runs, 3))[key], want, what)

    def test_tune_never_slower_by_medians_and_its_slowest(self):
        key = "--tune never slower than untuned"
        ok = series([68] * 3, [73] * 3, [141, 140, 139], [73, 74], ["x"] * 3)
        self.assertTrue(verdicts(workloads.judge_series(TRAINER, ok, 3))[key])
        one_slow = series([68] * 3, [73] * 3, [141, 60, 139], [73, 74], ["x"] * 3)
        self.assertFalse(verdicts(workloads.judge_series(TRAINER, one_slow, 3))[key])
        got = verdicts(workloads.judge_series(TRAINER, ok, 3))
        self.assertTrue(got["--tune removes the input bottleneck"])

    def test_the_imagenet_fix_must_say_what_would_help(self):
        runs = series([400] * 3, [400] * 3, [400] * 3, [400] * 2, ["nothing"] * 3)
        key = "the verdict's fix says what would help"
        self.assertTrue(verdicts(workloads.judge_series(IMAGENET, runs, 3))[key])
        for r in runs.values():
            if "verdict" in r:
                r["verdict"]["fix"] = "load batches in worker processes: DataLoader(num_workers=15, pin_memory=True)"
        self.assertTrue(verdicts(workloads.judge_series(IMAGENET, runs, 3))[key])
        for r in runs.values():
            if "verdict" in r:
                r["verdict"]["fix"] = "DataLoader(num_workers=4)"  # what it has
        self.assertFalse(verdicts(workloads.judge_series(IMAGENET, runs, 3))[key])

    def test_precision_steps_aside_or_applies(self):
        aside = run("precision", 140, lines=["gpuenv --tune=+precision: left alone from here: the script ..."])
        wrapped = run("precision", 140, lines=["gpuenv --tune=+precision: bf16 autocast around each outermost ..."])
        base = dict(plain=[68] * 3, watched=[73] * 3, tuned=[141, 140, 139], untuned=[73, 74], applied=["x"] * 3)
        key_aside = "--tune=+precision steps aside and says why"
        self.assertTrue(verdicts(workloads.judge_series(TRAINER, series(precision=aside, **base), 3))[key_aside])
        self.assertFalse(verdicts(workloads.judge_series(TRAINER, series(precision=wrapped, **base), 3))[key_aside])
        acc = dict(workloads.WORKLOADS["accelerate"], verdicts=["input-bound"])
        key = "--tune=+precision applies bf16 autocast to the fp32 loop"
        self.assertTrue(verdicts(workloads.judge_series(acc, series(precision=wrapped, **base), 3))[key])
        self.assertFalse(verdicts(workloads.judge_series(acc, series(precision=aside, **base), 3))[key])

    def test_partial_series_fail_without_crashing(self):
        runs = series([100], [100], [], [], [])
        got = workloads.judge_series(TRAINER, runs, 3)
        self.assertFalse(verdicts(got)["gpuenv run never slows it"])
        self.assertFalse(verdicts(got)["--tune converges in three runs and keeps only what helps"])


STUB_GPUENV = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
store = os.path.join(os.environ["GPUENV_CACHE_ROOT"], "jobs.json")
jobs = json.load(open(store)) if os.path.exists(store) else []
if sys.argv[1:3] == ["report", "--json"]:
    print(json.dumps({"jobs": list(reversed(jobs))}))
    sys.exit(0)
args = sys.argv[2:sys.argv.index("--")]
cmd = sys.argv[sys.argv.index("--") + 1:]
tune = any(a.startswith("--tune") for a in args)
mode = "tune" if tune else "run"
with open(os.path.join(os.environ["GPUENV_CACHE_ROOT"], "order"), "a") as f:
    f.write(" ".join(["gpuenv"] + sys.argv[1:sys.argv.index("--")]) + "\n")
if "--tune=+precision" in args:
    sys.stderr.write("gpuenv --tune=+precision: left alone from here: the script entered autocast (x.py:1)\n")
tuned = ["num_workers=15", "num_workers=11", "num_workers=11", "num_workers=11"][sum(1 for j in jobs if j["tuned"])]
jobs.append({"tuned": tuned if tune else "", "verdict": {"name": "busy", "evidence": "busy 99 % over 12 s", "fix": ""}})
json.dump(jobs, open(store, "w"))
sys.exit(subprocess.run(cmd, env=dict(os.environ, STUB_MODE=mode)).returncode)
'''

STUB_WORKLOAD = r'''import json, os, time
mode = os.environ.get("STUB_MODE", "plain")
if mode == "plain":
    with open(os.path.join(os.environ["GPUENV_CACHE_ROOT"], "order"), "a") as f:
        f.write("plain\n")
time.sleep(float(os.environ.get("STUB_SLEEP", "0")))
speed = {"plain": 100, "run": 100 * float(os.environ.get("STUB_RUN", "1")), "tune": 150}[mode]
print(json.dumps({"per_s": speed, "unit": "items/s"}))
'''


class Series(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="gpu-workloads-test-"))
        gpuenv = os.path.join(self.dir, "gpuenv")
        with open(gpuenv, "w") as f:
            f.write(STUB_GPUENV)
        os.chmod(gpuenv, stat.S_IRWXU)
        script = os.path.join(self.dir, "stub.py")
        with open(script, "w") as f:
            f.write(STUB_WORKLOAD)
        self.saved_env = dict(os.environ)
        os.environ.update(GPUENV_BIN=gpuenv, OUT=os.path.join(self.dir, "out"), PYTHON=sys.executable)
        workloads.PY = sys.executable
        self.saved_tempdir, tempfile.tempdir = tempfile.tempdir, self.dir  # the series' stores go here
        workloads.WORKLOADS["stub"] = {"script": script, "verdicts": ["busy"], "floor": 0.97,
                                       "precision": "aside", "minutes": 0}

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved_env)
        tempfile.tempdir = self.saved_tempdir
        shutil.rmtree(self.dir)
        del workloads.WORKLOADS["stub"]

    def main(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = workloads.main(["stub"])
        return rc, out.getvalue()

    def order(self):
        roots = [d for d in os.listdir(self.dir) if d.startswith("gpuenv-wl-stub-")]
        with open(os.path.join(self.dir, roots[-1], "order")) as f:
            return f.read().split("\n")[:-1]

    def test_a_series_alternates_and_ends_with_one_table(self):
        rc, out = self.main()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.order(), ["plain", "gpuenv run"] * 3 + [
            "gpuenv run --tune", "gpuenv run --no-tune", "gpuenv run --tune", "gpuenv run --no-tune",
            "gpuenv run --tune", "gpuenv run --tune=+precision"])
        rows = [x for x in out.splitlines() if x.startswith("| workload stub |")]
        self.assertEqual(len(rows), 6, out)  # speed, verdict, --tune speed, converges, precision, ran to its end
        self.assertNotIn("FAIL", out)
        self.assertIn("6 claims, 0 failed", out)
        self.assertIn("num_workers=15 / num_workers=11 / num_workers=11", out)
        with open(os.path.join(self.dir, "out", "claims.jsonl")) as f:
            self.assertEqual(len(f.readlines()), 6)  # also recorded for run.sh's table

    def test_a_fail_exits_1(self):
        os.environ["STUB_RUN"] = "0.8"
        rc, out = self.main()
        self.assertEqual(rc, 1, out)
        self.assertIn("| workload stub | gpuenv run never slows it (3 alternating pairs, medians) | >= 0.97x plain | "
                      "80, 80, 80 vs plain 100, 100, 100 items/s: 0.80x | **FAIL** |", out)

    def test_the_budget_stops_a_series_and_the_table_still_prints(self):
        os.environ.update(BUDGET_S="2", STUB_SLEEP="0.5")
        rc, out = self.main()
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"\| the series ran to its end \| every run, within BUDGET_S \| \d runs in [0-9.]+ min; "
                              r"stub \w+ not started: \d+ s left of BUDGET_S")

    def test_an_unknown_workload_is_named(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(workloads.main(["resnet"]), 2)
        self.assertIn("unknown workload resnet; the workloads are imagenet trainer accelerate nanogpt", err.getvalue())


if __name__ == "__main__":
    unittest.main()
