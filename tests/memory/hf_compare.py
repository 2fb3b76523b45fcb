"""Prints predicted vs measured for tests/memory/hf_h200_measured.json (or a
suite.jsonl from tests/gpu/hf_memory_measure.py --suite or --loops). Each row
is planned with its loop: `--loop keeps` (the outputs held through backward)
as --keeps-logits; `--loop frees` or none (`model(...).loss`) as
--frees-logits.

  python3 tests/memory/hf_compare.py [FILE] [--gpuenv build/gpuenv] [--live | --machine FILE]
Planned for tests/machines/h200.json (where the stored rows were measured),
with --live for this machine's GPU (rows measured here, on the device), or
another snapshot's.
A row that did not run is named and counted; any fails the comparison.
"""
import argparse, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def rows(path):
    text = open(path).read()
    if path.endswith(".jsonl"):
        return [json.loads(l) for l in text.splitlines() if l.strip()]
    return json.loads(text)["rows"]


def plan_flags(flags):
    """plan-memory's flags for a row: its --loop keeps|frees (frees when
    absent) becomes --keeps-logits or --frees-logits."""
    w = flags.split()
    loop = "frees"
    if "--loop" in w:
        i = w.index("--loop")
        loop = w[i + 1]
        del w[i:i + 2]
    return w + ["--keeps-logits" if loop == "keeps" else "--frees-logits"]


def main():
    ap = argparse.ArgumentParser(description="plan-memory against measured Hugging Face rows")
    ap.add_argument("file", nargs="?", default=os.path.join(HERE, "hf_h200_measured.json"))
    ap.add_argument("--gpuenv", default=os.path.join(ROOT, "build", "gpuenv"))
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--live", action="store_true", help="plan for this machine's GPU")
    where.add_argument("--machine", default=os.path.join(ROOT, "tests", "machines", "h200.json"))
    a = ap.parse_args()
    gpuenv, path = a.gpuenv, a.file
    machine = [] if a.live else ["--machine", a.machine]
    errs, signed, failed = [], [], []
    for r in rows(path):
        if "error" in r:
            print(f"{r['name']:32s} did not run: {r['error'][:200]}")
            failed.append(r["name"])
            continue
        cfg = os.path.join(HERE, "hf", r["config"] + ".json")
        out = subprocess.run([gpuenv, "plan-memory", "--json"] + machine + ["--config", cfg]
                             + plan_flags(r["flags"]), capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{r['name']:32s} exit {out.returncode}: {out.stderr.strip()[:200]}")
            failed.append(r["name"])
            continue
        p = json.loads(out.stdout)
        peak = r.get("peak_with_base", r["peak"])
        e = (p["peak_bytes_per_gpu"] - peak) / peak
        errs.append(abs(e))
        signed.append(e)
        print(f"{r['name']:32s} pred {p['peak_bytes_per_gpu']/2**30:7.2f} meas {peak/2**30:7.2f} "
              f"err {e*100:+6.1f}% phase {p['peak_phase']:20s} params {p['model']['parameters']-r['params']:+d} "
              f"{p['attention']}")
    if not errs:
        sys.exit("no rows")
    print(f"{len(errs)} rows: median |err| {statistics.median(errs)*100:.1f}%  max {max(errs)*100:.1f}%  "
          f"lowest {min(signed)*100:+.1f}%; {len(failed)} not compared")
    ok = max(errs) < 0.10 and statistics.median(errs) < 0.03 and min(signed) > -0.05 and not failed
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
