"""torch.distributed all_reduce bus bandwidth, measured like gpuenv bench's
nccl_all_reduce case (256 MiB fp32 sum; CUDA events; median of trials;
busbw = algbw * 2(n-1)/n as nccl-tests defines it). Run under torchrun;
rank 0 prints one JSON line."""
import json
import os
import statistics

import torch
import torch.distributed as dist


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    n = dist.get_world_size()
    out = {"world": n, "sizes": {}}
    for mib in (8, 64, 256):
        count = mib * 1024 * 1024 // 4
        x = torch.ones(count, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        times = []
        for _ in range(10):
            x.fill_(1.0)
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(10):
                dist.all_reduce(x)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / 10)
        x.fill_(1.0)
        dist.all_reduce(x)
        assert torch.all(x == n).item(), "all_reduce sum is wrong"
        t = statistics.median(times)
        algbw = count * 4 / t / 1e9
        out["sizes"][f"{mib}MiB"] = {"algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (n - 1) / n}
    if dist.get_rank() == 0:
        print(json.dumps(out), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
