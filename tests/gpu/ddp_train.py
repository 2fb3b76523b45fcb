"""DDP GPT-2-small training on synthetic data, one process per GPU (run it
under torchrun). Rank 0 prints one JSON line: tokens/s over all ranks, and
each rank's CPU affinity and OMP_NUM_THREADS as the environment set them."""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_train import GPT  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--label", default="")
    a = p.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    model = DDP(GPT(seq=a.seq).cuda(), device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    gen = torch.Generator(device="cuda").manual_seed(1 + dist.get_rank())

    def step():
        x = torch.randint(0, 50304, (a.batch, a.seq + 1), device="cuda", generator=gen)
        loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    torch.cuda.synchronize()
    dt = time.perf_counter() - start
    me = {"rank": dist.get_rank(), "cpus": sorted(os.sched_getaffinity(0)),
          "omp": os.environ.get("OMP_NUM_THREADS"), "torch_threads": torch.get_num_threads(),
          "tf32": os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"), "seconds": dt,
          "loss": loss.item()}
    ranks = [None] * dist.get_world_size()
    dist.all_gather_object(ranks, me)
    if dist.get_rank() == 0:
        world = dist.get_world_size()
        tokens = a.batch * a.seq * a.steps * world
        print(json.dumps({"label": a.label, "world": world,
                          "tokens_per_s": tokens / max(r["seconds"] for r in ranks),
                          "ranks": [{k: (f"{v[0]}-{v[-1]}" if k == "cpus" and v else v)
                                     for k, v in r.items()} for r in ranks]}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
