"""NVML GPM through gpuenv's sampler against pynvml's own GPM reading.

Under a load (an 8192x8192 bf16 matmul loop, or the same in fp32 with TF32
off), runs gpuenv_gpm_probe (the exporter's sample_nvml, one JSON line a
second) and, in a thread of this process, pynvml's nvmlGpmSampleGet /
nvmlGpmMetricsGet a second apart. Compares the mean of each ratio over the
windows that lie wholly inside the loop (both readers stamp their samples
with CLOCK_MONOTONIC, gpuenv's steady clock). Tolerance: 0.05 absolute per
ratio (the two readers' one-second windows are offset by up to a second).
Prints one JSON line; exit 1 when a ratio disagrees or GPM is missing.
  python3 tests/gpu/gpm.py --probe build/tests/gpuenv_gpm_probe [--seconds 12]
"""
import argparse
import ctypes
import json
import subprocess
import sys
import threading
import time

import pynvml
import torch

TOLERANCE = 0.05
METRICS = {  # gpuenv's name -> NVML metric id (nvml.h)
    "gr_engine_active": pynvml.NVML_GPM_METRIC_GRAPHICS_UTIL,
    "sm_active": pynvml.NVML_GPM_METRIC_SM_UTIL,
    "sm_occupancy": pynvml.NVML_GPM_METRIC_SM_OCCUPANCY,
    "tensor_active": pynvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL,
    "fp32_active": pynvml.NVML_GPM_METRIC_FP32_UTIL,
    "fp16_active": pynvml.NVML_GPM_METRIC_FP16_UTIL,
    "dram_active": pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL,
}


def pynvml_reader(handle, stop, out):
    """pynvml's GPM: metrics between samples a second apart, as ratios."""
    samples = [pynvml.nvmlGpmSampleAlloc(), pynvml.nvmlGpmSampleAlloc()]
    pynvml.nvmlGpmSampleGet(handle, samples[0])
    last = time.monotonic()
    while not stop.wait(1.0):
        pynvml.nvmlGpmSampleGet(handle, samples[1])
        now = time.monotonic()
        mg = pynvml.c_nvmlGpmMetricsGet_t()
        mg.version = pynvml.NVML_GPM_METRICS_GET_VERSION
        mg.numMetrics = len(METRICS)
        mg.sample1, mg.sample2 = samples[0], samples[1]
        for i, mid in enumerate(METRICS.values()):
            mg.metrics[i].metricId = mid
        pynvml.nvmlGpmMetricsGet(mg)
        row = {k: mg.metrics[i].value / 100.0 for i, k in enumerate(METRICS) if mg.metrics[i].nvmlReturn == 0}
        row["t0"], row["t1"], last = last, now, now
        out.append(row)
        samples.reverse()
    for s in samples:
        pynvml.nvmlGpmSampleFree(s)


def load(kind, seconds):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    dtype = torch.bfloat16 if kind == "bf16" else torch.float32
    a = torch.randn(8192, 8192, device="cuda", dtype=dtype)
    b = torch.randn(8192, 8192, device="cuda", dtype=dtype)
    c = a @ b  # cuBLAS's first call (its workspace, the kernel choice) outside the window
    torch.cuda.synchronize()
    start = time.monotonic()
    end = start + seconds
    n = 0
    while time.monotonic() < end:
        for _ in range(4):
            c = a @ b
        torch.cuda.synchronize()
        n += 4
    stop = time.monotonic()
    return 2 * 8192 ** 3 * n / (stop - start) / 1e12, (start, stop)


def inside(rows, window):
    """The rows whose sampling window lies wholly inside the loop."""
    return [r for r in rows if r["t0"] >= window[0] and r["t1"] <= window[1]]


def mean(rows, key):
    xs = [r[key] for r in rows if r.get(key) is not None]
    return sum(xs) / len(xs) if xs else None


def one(kind, args, handle):
    torch.zeros(1, device="cuda")  # CUDA up before the readers start
    probe = subprocess.Popen([args.probe, "libnvidia-ml.so.1", "1000", str(args.seconds + 4)],
                             stdout=subprocess.PIPE, text=True)
    theirs, stop = [], threading.Event()
    t = threading.Thread(target=pynvml_reader, args=(handle, stop, theirs))
    t.start()
    tflops, window = load(kind, args.seconds)
    stop.set()
    t.join()
    out, _ = probe.communicate(timeout=30)
    ours, last = [], None
    for line in out.splitlines():
        j = json.loads(line)
        if last is not None:  # the first round has no GPM figures
            ours.append({**j["devices"][0], "t0": last, "t1": j["t"]})
        last = j["t"]
    ours, theirs = inside(ours, window), inside(theirs, window)
    row = {"load": kind, "tflops": round(tflops, 1), "rounds": len(ours), "pynvml_rounds": len(theirs),
           "utilization": mean(ours, "utilization"), "gpuenv": {}, "pynvml": {}, "agree": True}
    for k in METRICS:
        g, p = mean(ours, k), mean(theirs, k)
        row["gpuenv"][k], row["pynvml"][k] = g, p
        if g is None or p is None or abs(g - p) > TOLERANCE:
            row["agree"] = False
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--probe", required=True)
    p.add_argument("--seconds", type=int, default=12)
    args = p.parse_args()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    support = pynvml.nvmlGpmQueryDeviceSupport(handle)
    abi = {"pynvml_NVML_GPM_METRIC_MAX": pynvml.NVML_GPM_METRIC_MAX,
           "pynvml_sizeof_metrics_get": ctypes.sizeof(pynvml.c_nvmlGpmMetricsGet_t),
           "gpm_supported": bool(support.isSupportedDevice),
           "driver": pynvml.nvmlSystemGetDriverVersion()}
    rows = [one(kind, args, handle) for kind in ("bf16", "fp32")]
    ok = all(r["agree"] for r in rows)
    print(json.dumps({"abi": abi, "tolerance": TOLERANCE, "rows": rows, "pass": ok}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
