"""GPM's graphics-engine activity against NVML's utilisation on a whole GPU.

gpuenv takes a MIG device's utilisation (NVML gives none) from GPM's
graphics-engine activity of its GPU instance (docs/feedback.md). This checks,
on a whole GPU where NVML gives both, that the two measure the same thing:
the share of time a kernel ran. A loop keeps the GPU busy for a share of each
100 ms (0 %, 25 %, 50 %, 75 %, 100 %) for SECONDS each, while
gpuenv_gpm_probe (the exporter's sampler) prints both figures once a second.
For each duty cycle, the mean of each over the rounds wholly inside it must
agree within 10 points (NVML's utilisation is a sampled figure; GPM's an
exact count) and both must sit within 15 points of the duty cycle.
Prints one JSON line and PASS/FAIL; exit 1 on FAIL.
  python3 tests/gpu/gr_vs_util.py --probe build/tests/gpuenv_gpm_probe [--seconds 8]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import torch

AGREE, NEAR_DUTY = 0.10, 0.15
DUTIES = (0.0, 0.25, 0.5, 0.75, 1.0)
PERIOD_S = 0.1


def run_duty(duty, seconds, a, b):
    """Busy for `duty` of each period: matmuls until the busy share has passed, then idle."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        t0 = time.monotonic()
        while time.monotonic() - t0 < duty * PERIOD_S:
            a @ b
            torch.cuda.synchronize()
        rest = PERIOD_S - (time.monotonic() - t0)
        if rest > 0:
            time.sleep(rest)
    return start, time.monotonic()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", required=True)
    ap.add_argument("--seconds", type=float, default=8)
    args = ap.parse_args()
    # About 1.5 ms a product on an H100: the host's synchronize between them is under 1 % of it.
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    a @ b
    torch.cuda.synchronize()
    rounds = int(len(DUTIES) * (args.seconds + 1)) + 4
    probe = subprocess.Popen([args.probe, "libnvidia-ml.so.1", "1000", str(rounds)], stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)  # its first round (GPM needs two samples)
    windows = {}
    for duty in DUTIES:
        windows[duty] = run_duty(duty, args.seconds, a, b)
    out, _ = probe.communicate(timeout=60)
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    rows, ok = [], True
    for duty, (t0, t1) in windows.items():
        # A round's figures cover the second before its stamp: keep those wholly inside.
        inside = [x["devices"][0] for x in lines if t0 + 1.0 <= x["t"] <= t1]
        util = [d["utilization"] for d in inside if d.get("utilization") is not None]
        gr = [d["gr_engine_active"] for d in inside if d.get("gr_engine_active") is not None]
        row = {"duty": duty, "rounds": len(inside),
               "nvml_utilization": round(statistics.mean(util), 3) if util else None,
               "gpm_gr_engine_active": round(statistics.mean(gr), 3) if gr else None}
        row["pass"] = bool(util and gr and len(inside) >= 3 and abs(row["nvml_utilization"] - row["gpm_gr_engine_active"]) <= AGREE
                           and abs(row["gpm_gr_engine_active"] - duty) <= NEAR_DUTY
                           and abs(row["nvml_utilization"] - duty) <= NEAR_DUTY)
        ok = ok and row["pass"]
        rows.append(row)
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "rows": rows, "pass": ok}))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
