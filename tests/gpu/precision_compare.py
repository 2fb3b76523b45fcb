"""Reads precision_train.py's JSON lines and prints the tables of
docs/performance.md: speed against the hand-written autocast, and each loss
curve's distance from fp32's.

Distance d(a, b): the largest relative gap between the two curves' 10-step
moving means, over steps 10..N. Tolerance: d of the fp32 script against
itself with another seed (another initialisation and data order), fixed
before the runs: bf16 passes when it moves the curve no more than a new seed
does; the stale-weights variant must exceed it."""
import json
import sys


def smooth(xs, w=10):
    return [sum(xs[i - w + 1:i + 1]) / w for i in range(w - 1, len(xs))]


def distance(a, b):
    sa, sb = smooth(a), smooth(b)
    return max(abs(x - y) / y for x, y in zip(sa, sb))


def main():
    rows = [json.loads(line) for path in sys.argv[1:] for line in open(path) if line.startswith("{")]
    for model in ("gpt", "resnet"):
        shapes = sorted({r.get("shape", "") for r in rows if r["model"] == model and "per_s" in r})
        for compiled, shape in [(c, sh) for c in (False, True) for sh in shapes]:
            speed = {r["label"]: r for r in rows if r["model"] == model and "per_s" in r
                     and bool(r.get("compile")) == compiled and r.get("shape", "") == shape}
            if not speed:
                continue
            hand = speed.get("autocast") or speed.get("compile_autocast")
            print("\n%s %s speed%s" % (model, shape, " under torch.compile" if compiled else ""))
            for label, r in speed.items():
                share = " (%.0f %% of hand-written)" % (100 * r["per_s"] / hand["per_s"]) if hand else ""
                print("  %-16s %10.1f %s%s autocast_in_forward=%s first_step=%.1fs" % (
                    label, r["per_s"], r["unit"], share, r["autocast_in_forward"], r.get("first_step_s", 0)))
                if compiled:
                    d = r.get("dynamo", {})
                    print("    dynamo: unique_graphs=%s graph_breaks=%d %s frames=%s" % (
                        d.get("stats", {}).get("unique_graphs"), sum(d.get("graph_break", {}).values()),
                        dict(d.get("graph_break", {})), d.get("frames", {})))
        curves = {r["label"]: r for r in rows if r["model"] == model and "losses" in r}
        if "fp32" not in curves or "fp32_seed1" not in curves:
            continue
        ref = curves["fp32"]["losses"]
        tol = distance(curves["fp32_seed1"]["losses"], ref)
        print("%s curves over %d steps: tolerance (fp32, another seed) %.4f" % (model, len(ref), tol))
        for label, r in curves.items():
            if label == "fp32":
                continue
            d = distance(r["losses"], ref)
            verdict = "" if label == "fp32_seed1" else ("within" if d <= tol else "EXCEEDS")
            pace = ""
            if "curve_s" in r and "curve_s" in curves["fp32"]:
                pace = " %.2fs (%.2fx fp32's)" % (r["curve_s"], curves["fp32"]["curve_s"] / r["curve_s"])
            print("  %-14s d=%.4f final(last 20)=%.4f first=%.3f%s %s" % (
                label, d, r["final"], r["losses"][0], pace, verdict))
        print("  %-14s final(last 20)=%.4f min=%.4f %s" % ("fp32", curves["fp32"]["final"], min(ref),
                                                         "%.2fs" % curves["fp32"]["curve_s"]
                                                         if "curve_s" in curves["fp32"] else ""))


if __name__ == "__main__":
    main()
