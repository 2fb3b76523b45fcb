"""Writes the recorded-style timelines that decide/verdict_test.cc judges.

Each is what `gpuenv run` stores for a job (context + timeline, the format of
model/job_json.h), shaped after what an H200 shows for that kind of job: a
start-up phase (imports, CUDA init) before the job holds GPU memory, noise on
every figure, and a short tail. Run `python3 tests/timelines/make.py` to
rewrite them; the seed keeps them stable.
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = {"uuid": "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10", "name": "NVIDIA H200", "memory_total_mib": 143771.0,
        "pcie_gen": 5, "pcie_width": 16, "max_sm_mhz": 1980.0, "power_limit_w": 700.0}
METRICS = ["util_pct", "mem_mib", "power_w", "sm_mhz", "pcie_rx_mbs", "pcie_tx_mbs", "thermal", "power_cap",
           "cpu_cores", "top_cpu_cores", "workers", "other_gpu_mem_mib",
           "sm_active_pct", "tensor_active_pct", "fp32_active_pct", "fp16_active_pct", "dram_active_pct",
           "sm_occupancy_pct"]


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


def samples(rng, seconds, startup, phase):
    """One dict per second; phase(rng) gives the steady-state figures."""
    out = []
    for t in range(seconds):
        if t < startup:  # python imports torch, builds the model: CPU, no GPU memory yet
            s = {"util_pct": 0, "mem_mib": 0, "power_w": 75 + rng.random() * 5, "sm_mhz": 345, "pcie_rx_mbs": 0,
                 "pcie_tx_mbs": 0, "cpu_cores": 0.9 + rng.random() * 0.1, "top_cpu_cores": 0.9 + rng.random() * 0.1,
                 "workers": 0, "other_gpu_mem_mib": 0, "events": 1}
        else:
            s = phase(rng)
        s["t"] = float(t)
        out.append(s)
    return out


def bucket(ss, width):
    points = []
    for i in range(0, len(ss), width):
        group = ss[i:i + width]
        p = {"t0": group[0]["t"], "t1": group[-1]["t"], "samples": len(group), "clock_events": 0}
        for s in group:
            p["clock_events"] |= s.get("events", 0)
        for m in METRICS:
            xs = [s[m] for s in group if m in s]
            if xs:
                p[m] = [round(min(xs), 2), round(sum(xs) / len(xs), 2), round(max(xs), 2), len(xs)]
        points.append(p)
    return {"width": width, "points": points}


def thermal_bits(s):
    e = s.get("events", 0)
    s["thermal"] = 1.0 if e & (0x8 | 0x20 | 0x40 | 0x80) else 0.0
    s["power_cap"] = 1.0 if e & 0x4 else 0.0
    return s


def write(name, seconds, startup, phase, cpus_per_gpu=16, width=1, gpus=(H200,), unwatched="", seed=1,
          gemm_tflops=None):
    rng = random.Random(seed)
    ss = [thermal_bits(s) for s in samples(rng, seconds, startup, phase)]
    if unwatched:
        for s in ss:
            for m in METRICS[:8] + ["other_gpu_mem_mib"]:
                s.pop(m, None)
            s.pop("events", None)
    doc = {"context": {"gpus": list(gpus), "cpus_per_gpu": cpus_per_gpu, "interval_s": 1.0, "unwatched": unwatched},
           "timeline": bucket(ss, width)}
    if gemm_tflops:
        doc["context"]["gemm_tflops"] = gemm_tflops
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")


def gpu(rng, util, mem, power, sm=1980, rx=0, tx=0, events=0):
    return {"util_pct": clamp(util + rng.gauss(0, 3), 0, 100), "mem_mib": mem + rng.random() * 64 if mem else 0.0,
            "power_w": power + rng.gauss(0, 10), "sm_mhz": sm, "pcie_rx_mbs": max(0, rx + rng.gauss(0, rx * 0.05)),
            "pcie_tx_mbs": tx, "events": events}


def cpu(rng, top, tree, workers):
    return {"top_cpu_cores": clamp(top + rng.gauss(0, 0.02), 0, 1.0), "cpu_cores": tree + rng.gauss(0, 0.05),
            "workers": workers}


# A ResNet-50 loop as new users write it: augmentation in __getitem__, DataLoader defaults.
write("input_bound", 300, 12, lambda r: {**gpu(r, 9, 7400, 160, rx=900, events=1 if r.random() < 0.5 else 0),
                                         **cpu(r, 0.99, 1.02, 0)})
# The same with 15 workers that are all busy: more workers will not help.
write("input_bound_saturated", 300, 12, lambda r: {**gpu(r, 45, 9100, 380, rx=2500), **cpu(r, 0.98, 15.4, 15)})
# fp32 GPT-2 small, batch 8: the GPU is busy; memory has room, the power cap shows now and then.
write("busy", 2400, 20, lambda r: {**gpu(r, 98, 31000, 640, sm=1950 if r.random() < 0.8 else 1890,
                                          events=0x4 if r.random() < 0.3 else 0), **cpu(r, 1.0, 1.1, 0)}, width=8)
# A GPU-bound loop at a small batch: 70% busy, 9 GiB of 141.
write("memory_headroom", 300, 15, lambda r: {**gpu(r, 72, 9300, 420), **cpu(r, 0.7, 0.8, 4)})
# Hot GPU: sw_thermal_slowdown in about half the samples, the SM clock down.
write("thermal", 300, 15, lambda r: (lambda hot: {**gpu(r, 96, 120000, 600, sm=1410 if hot else 1980,
                                                         events=0x20 if hot else 0), **cpu(r, 1.0, 1.1, 0)})(
    r.random() < 0.5))
# Power-capped at 80% utilisation: the cap holds the clock at 1500 MHz.
write("power_capped", 300, 15, lambda r: {**gpu(r, 80, 110000, 698, sm=1500, events=0x4), **cpu(r, 0.6, 0.7, 2)})
# Copying whole float32 batches from pageable memory: PCIe near its limit, the GPU waits.
write("copy_bound", 300, 10, lambda r: {**gpu(r, 28, 40000, 250, rx=44000, tx=300), **cpu(r, 0.5, 0.6, 8)})
# The job never touched the GPU (trained on the CPU).
write("idle", 200, 0, lambda r: {**gpu(r, 0, 0, 72, sm=345, events=1), "util_pct": 0.0, **cpu(r, 1.0, 4.0, 0)})
# It used another GPU (a hard-coded cuda:1) than the one it was given.
write("other_gpu", 200, 5, lambda r: {**gpu(r, 0, 0, 72, sm=345, events=1), "util_pct": 0.0,
                                      "other_gpu_mem_mib": 20480.0, **cpu(r, 1.0, 1.1, 0)})
# 75% busy with its memory mostly used: nothing stands out.
write("unclear", 300, 15, lambda r: {**gpu(r, 75, 120000, 500), **cpu(r, 0.6, 0.7, 4)})
# Three seconds: too short to judge.
write("too_short", 3, 0, lambda r: {**gpu(r, 50, 1000, 200), **cpu(r, 0.5, 0.5, 0)})
# NVML could not be loaded: only /proc was sampled.
write("unwatched", 100, 0, lambda r: cpu(r, 1.0, 1.0, 0), gpus=(),
      unwatched="libnvidia-ml.so.1: cannot open shared object file: No such file or directory")


def gpm(rng, sm, tensor, fp32, dram, occupancy, fp16=0.0):
    """NVML GPM's figures (Hopper and newer), percent of each second."""
    def noisy(x):
        return clamp(x + rng.gauss(0, 1.5), 0, 100) if x else 0.0
    return {"sm_active_pct": noisy(sm), "tensor_active_pct": noisy(tensor), "fp32_active_pct": noisy(fp32),
            "fp16_active_pct": noisy(fp16), "dram_active_pct": noisy(dram), "sm_occupancy_pct": noisy(occupancy)}


# GPM from here on. fp32 GPT-2 small with torch.set_float32_matmul_precision("highest") on an H200: nvidia-smi
# says 99 % busy, the tensor pipe idles and the FP32 pipe works; bench had measured this GPU's GEMMs
# (fp32 / TF32 / bf16 at 8192, docs/performance.md).
write("fp32_cuda_cores", 600, 20, lambda r: {**gpu(r, 99, 31000, 650), **gpm(r, 90, 0, 62, 25, 22),
                                             **cpu(r, 1.0, 1.1, 0)}, width=2,
      gemm_tflops={"fp32": 47.0, "tf32": 355.2, "bf16": 703.4})
# The same job on a GPU bench never measured: the fix names TF32 and bf16 without figures.
write("fp32_cuda_cores_unmeasured", 300, 20, lambda r: {**gpu(r, 99, 31000, 650), **gpm(r, 90, 0, 62, 25, 22),
                                                        **cpu(r, 1.0, 1.1, 0)})
# Small kernels one after another (batch 1 decoding): always a kernel running, few SMs busy.
write("low_sm_activity", 300, 15, lambda r: {**gpu(r, 97, 120000, 260), **gpm(r, 18, 6, 3, 20, 9),
                                             **cpu(r, 1.0, 1.05, 0)})
# A bf16 loop that fills the tensor cores: busy, and GPM agrees.
write("busy_gpm", 300, 15, lambda r: {**gpu(r, 99, 120000, 690), **gpm(r, 96, 85, 3, 45, 30),
                                      **cpu(r, 1.0, 1.05, 0)})
# A notebook kernel that moved a model to the GPU and then sat: memory held, the GPU idle.
write("idle_held", 600, 10, lambda r: {**gpu(r, 0, 6100, 75, sm=345, events=1), "util_pct": 0.0,
                                       **cpu(r, 0.02, 0.03, 0)})
# A batch at the edge of memory: 139 GiB of 140.4 held, the GPU busy.
write("memory_full", 300, 15, lambda r: {**gpu(r, 93, 139000, 620), **cpu(r, 1.0, 1.1, 0)})
