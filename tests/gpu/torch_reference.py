#!/usr/bin/env python3
"""PyTorch's figures for what `gpuenv bench` measures, by the same method:
random operands, warm-up, CUDA events around a batch sized to last at least
20 ms, 10 trials, the median. Prints one JSON object.

  bf16 8192^3 matmul (torch.matmul), fp32 8192^3 with TF32 allowed, and a
  device copy of 1 GiB (dst.copy_(src)), counting bytes read + written.
"""
import json
import math
import statistics
import sys

import torch

TRIALS = 10
MIN_TRIAL_S = 0.02
WARMUP = 2


def seconds_per_op(op):
    for _ in range(WARMUP):
        op()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def batch(n):
        start.record()
        for _ in range(n):
            op()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3

    iters = max(1, math.ceil(MIN_TRIAL_S / batch(1)))
    return statistics.median(batch(iters) / iters for _ in range(TRIALS)), iters


def matmul(dtype, n, tf32=False):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    s, iters = seconds_per_op(lambda: torch.matmul(a, b, out=c))
    return {"tflops": 2 * n**3 / s / 1e12, "median_s": s, "iters": iters}


def copy(nbytes):
    src = torch.randint(0, 2**31 - 1, (nbytes // 4,), device="cuda", dtype=torch.int32)
    dst = torch.empty_like(src)
    s, iters = seconds_per_op(lambda: dst.copy_(src))
    assert torch.equal(dst, src)
    return {"gbps": 2 * nbytes / s / 1e9, "median_s": s, "iters": iters}


def main():
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no GPU"}))
        return 1
    out = {
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "method": f"CUDA events, batches of >= {MIN_TRIAL_S * 1e3:.0f} ms, median of {TRIALS} trials",
        "gemm_bf16_8192": matmul(torch.bfloat16, 8192),
        "gemm_tf32_8192": matmul(torch.float32, 8192, tf32=True),
        "gemm_bf16_4096": matmul(torch.bfloat16, 4096),
        "memcpy_d2d": copy(1 << 30),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
