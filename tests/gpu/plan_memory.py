"""H200 proof of `gpuenv plan-memory` (issue 14).

For every config of plan_memory_measure.py's SUITE, and its LOOPS again with
`--loop keeps`: the predicted peak
(`gpuenv plan-memory FLAGS --json`, peak_bytes_per_gpu) against the measured
torch.cuda.max_memory_allocated() over 3 AdamW steps, planned with the row's
loop (`--loop keeps` -> --keeps-logits, else --frees-logits). Targets: every config
within 10 %, the median within 5 %. Then the edge check: for EDGE (a ~1 B
Llama at T=8192) the predicted largest batch must train and the next size up
must raise torch.OutOfMemoryError. Last, a planned job (issue 40, item 4):
`plan-memory FLAGS -- CMD`, then `gpuenv run -- CMD` in a store of its own,
and the job's record in `report --json` must hold that plan against the peak
gpuenv run's hook measured (source torch), within 10 %. Prints a markdown
table, a JSON summary line and PASS/FAIL; exit status 0 only on PASS.

  GPUENV=./build/gpuenv python3 tests/gpu/plan_memory.py [--out FILE.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURE = os.path.join(HERE, "plan_memory_measure.py")
sys.path.insert(0, HERE)
import plan_memory_measure as pm  # noqa: E402  (SUITE, EDGE, fits)
sys.path.insert(0, os.path.join(HERE, "..", "memory"))
from hf_compare import plan_flags  # noqa: E402  (a row's --loop as plan-memory's flag)


def predict(gpuenv, flags):
    r = subprocess.run([gpuenv, "plan-memory", "--json"] + plan_flags(flags),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"gpuenv plan-memory {flags}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def measure(flags):
    r = subprocess.run([sys.executable, MEASURE] + flags.split(), capture_output=True, text=True)
    if r.returncode != 0:
        return {"failure": r.stderr[-1500:]}
    return json.loads(r.stdout.strip().splitlines()[-1])["measured"]


def with_batch(flags, b):
    w = flags.split()
    w[w.index("--batch") + 1] = str(b)
    return " ".join(w)


def planned_job(gpuenv, flags):
    """The planned job's record: what report --json says of it, beside the
    plan and the script's own torch.cuda.max_memory_allocated()."""
    cmd = [sys.executable, MEASURE] + flags.split()
    env = dict(os.environ, GPUENV_CACHE_ROOT=tempfile.mkdtemp(prefix="gpuenv-planned-"))  # a store of its own

    def run(*argv):
        r = subprocess.run([gpuenv] + list(argv), capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"gpuenv {' '.join(argv[:2])}: exit {r.returncode}: {r.stderr[-800:]}")
        return r.stdout

    plan = json.loads(run("plan-memory", "--json", *plan_flags(flags), "--", *cmd))
    script = json.loads(run("run", "--", *cmd).strip().splitlines()[-1])["measured"]
    job = json.loads(run("report", "--json"))["jobs"][0]
    return {"flags": flags, "plan_peak_bytes": plan["peak_bytes_per_gpu"], "script_peak_bytes": script["peak"],
            "job": {k: job.get(k) for k in ("id", "peak_memory_bytes", "peak_memory_source", "planned_peak_bytes",
                                             "plan_error_pct", "memory_plan")}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="also write the rows and summary as JSON here")
    a = ap.parse_args()
    gpuenv = os.environ.get("GPUENV", "./build/gpuenv")
    rows, errors = [], []
    print("| config | predicted GiB | measured GiB | error % | peak phase |")
    print("|---|---:|---:|---:|---|")
    # SUITE in the measuring script's default loop (frees), then LOOPS again
    # with the logits kept (issue 40).
    keeps = [(name + " keeps", flags + " --loop keeps") for name, flags in getattr(pm, "LOOPS", [])]
    for name, flags in pm.SUITE + keeps:
        p, m = predict(gpuenv, flags), measure(flags)
        if "failure" in m:
            print(f"| {name} | {p['peak_bytes_per_gpu'] / 2**30:.2f} | failed | | |")
            rows.append({"name": name, "flags": flags, "failure": m["failure"]})
            errors.append(float("inf"))
            continue
        err = (p["peak_bytes_per_gpu"] - m["peak"]) / m["peak"]
        errors.append(abs(err))
        rows.append({"name": name, "flags": flags, "predicted": p["peak_bytes_per_gpu"],
                     "components": p["components"], "measured": m, "error": err})
        print(f"| {name} | {p['peak_bytes_per_gpu'] / 2**30:.2f} | {m['peak'] / 2**30:.2f} "
              f"| {100 * err:+.1f} | {p['peak_phase']} |", flush=True)
    worst, median = max(errors), statistics.median(errors)
    each_ok, median_ok = worst < 0.10, median < 0.05

    edge = predict(gpuenv, pm.EDGE)
    b = edge["largest_batch"]
    # As users run it: under gpuenv run, whose plan plan-memory assumed
    # (PYTORCH_ALLOC_CONF=expandable_segments:True).
    run = (gpuenv, "run", "--")
    fits_b = b >= 1 and pm.fits(with_batch(pm.EDGE, b).split(), run)
    next_oom = not pm.fits(with_batch(pm.EDGE, b + 1).split(), run)
    print(f"\nedge: {pm.EDGE}\n  predicted largest batch {b}: "
          f"{'trains' if fits_b else 'does NOT train'}; batch {b + 1}: "
          f"{'OutOfMemoryError' if next_oom else 'trains (should not)'}")
    try:
        planned = planned_job(gpuenv, pm.SUITE[0][1])
        j = planned["job"]
        planned_ok = (j["planned_peak_bytes"] == planned["plan_peak_bytes"] and j["peak_memory_source"] == "torch"
                      and j["plan_error_pct"] is not None and abs(j["plan_error_pct"]) <= 10)
    except (RuntimeError, ValueError, KeyError, IndexError) as e:
        planned, planned_ok = {"failure": repr(e)[:1500]}, False
    print(f"\nplanned job: {json.dumps(planned)}")
    ok = each_ok and median_ok and fits_b and next_oom and planned_ok
    summary = {"worst_error": worst, "median_error": median, "edge_config": pm.EDGE,
               "edge_largest_batch": b, "edge_batch_trains": fits_b, "edge_next_ooms": next_oom,
               "planned_job": planned, "pass": ok}
    print(f"worst {100 * worst:.1f} % (target < 10), median {100 * median:.1f} % (target < 5)")
    print(json.dumps(summary))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rows": rows, "summary": summary}, f, indent=1)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
