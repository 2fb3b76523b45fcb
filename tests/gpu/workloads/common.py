"""What every workload here shares: a timer that starts after the warm-up
steps, so a run's figure is its steady speed, and the one JSON line each
prints last ({"workload", "per_s", "unit", ...}), which tests/gpu/workloads.py
reads."""
import json
import time

import torch


class Meter:
    """Counts items per second over the steps after `warmup`; synchronizes the
    GPU at both ends so queued work is counted where it ran."""

    def __init__(self, warmup):
        self.warmup, self.step, self.items, self.t0 = warmup, 0, 0, None

    def tick(self, items):
        self.step += 1
        if self.step == self.warmup:
            torch.cuda.synchronize()
            self.t0 = time.perf_counter()
        elif self.step > self.warmup:
            self.items += items

    def report(self, workload, unit, **extra):
        torch.cuda.synchronize()
        dt = time.perf_counter() - self.t0 if self.t0 else float("nan")
        line = {"workload": workload, "per_s": round(self.items / dt, 2), "unit": unit,
                "timed_steps": self.step - self.warmup, "timed_s": round(dt, 3),
                "peak_bytes": torch.cuda.max_memory_allocated(), **extra}
        print(json.dumps(line), flush=True)
