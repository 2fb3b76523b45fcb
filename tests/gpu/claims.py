"""The one home of `make test-gpu`'s judgement: every check appends a claim
(what docs/performance.md says, its threshold, what this run measured, pass
or fail) to $OUT/claims.jsonl, and `claims.py table` ends the run with one
table and exits 1 when a claim failed or none was recorded.

  python3 tests/gpu/claims.py add SECTION CLAIM THRESHOLD MEASURED 0|1
  python3 tests/gpu/claims.py table        # markdown table; exit 1 on a fail
From Python: `import claims; claims.add(section, claim, threshold, measured, ok)`."""
import json
import os
import sys


def path():
    out = os.environ.get("OUT") or "/tmp/gpuenv-gpu"
    os.makedirs(out, exist_ok=True)
    return os.path.join(out, "claims.jsonl")


def row(section, claim, threshold, measured, ok):
    return {"section": section, "claim": claim, "threshold": str(threshold), "measured": str(measured),
            "pass": bool(ok)}


def add(section, claim, threshold, measured, ok, echo=True):
    """Records a claim; echo=False for a script that ends with its own table (workloads.py)."""
    r = row(section, claim, threshold, measured, ok)
    with open(path(), "a") as f:
        f.write(json.dumps(r) + "\n")
    if echo:
        print("%s: [%s] %s (%s; measured %s)" % ("PASS" if ok else "FAIL", section, claim, threshold, measured),
              flush=True)
    return bool(ok)


def rows():
    try:
        with open(path()) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def table(rs=None):
    """Prints the rows (default: every claim recorded under $OUT) and returns 1 on a fail or none."""
    rs = rows() if rs is None else rs
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    print("\n| section | claim | threshold | measured | result |\n|---|---|---|---|---|")
    for r in rs:
        print("| %s | %s | %s | %s | %s |" % (cell(r["section"]), cell(r["claim"]), cell(r["threshold"]),
                                            cell(r["measured"]), "pass" if r["pass"] else "**FAIL**"))
    failed = sum(not r["pass"] for r in rs)
    print("\n%d claims, %d failed%s" % (len(rs), failed, "" if rs else ": nothing was judged"))
    return 1 if failed or not rs else 0


def main(argv):
    if argv[:1] == ["add"] and len(argv) == 6:
        add(argv[1], argv[2], argv[3], argv[4], argv[5] in ("1", "true", "pass"))
        return 0
    if argv == ["table"]:
        return table()
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
