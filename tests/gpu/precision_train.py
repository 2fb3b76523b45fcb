"""`gpuenv run --tune=+precision` on real torch (tests/gpu/precision.sh runs it):
GPT-2 small and ResNet-50 written in fp32, timed and trained on seeded,
learnable synthetic data. One JSON line per run.

  --variant fp32      the script as written (under --tune=+precision: the hook's bf16)
  --variant autocast  the same with torch.autocast("cuda", torch.bfloat16) written in by hand
  --variant stale     the broken hook: one autocast region entered before training and never
                      left, so autocast's cast cache keeps the step-0 bf16 weights
  --variant autocast_cl  ResNet only: hand-written autocast with channels_last

--curve N: N seeded steps, every loss printed. Without it: tokens (or images)/s.
Several runs in one process: separate their arguments with --next."""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_train import GPT  # noqa: E402


def gpt_batches(n, batch, seq, seed):
    """n batches of tokens from a fixed sparse Markov chain over 50304
    tokens: each token has 4 likely successors, so the loss falls from
    ln(50304) = 10.8 towards ln(4) = 1.4 as the model learns it."""
    g = torch.Generator(device="cuda").manual_seed(1234)
    succ = torch.randint(0, 50304, (50304, 4), device="cuda", generator=g)
    data = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.empty(n * batch, seq + 1, dtype=torch.long, device="cuda")
    x[:, 0] = torch.randint(0, 50304, (n * batch,), device="cuda", generator=data)
    pick = torch.randint(0, 4, (n * batch, seq), device="cuda", generator=data)
    for t in range(seq):
        x[:, t + 1] = succ[x[:, t], pick[:, t]]
    return [(b[:, :-1], b[:, 1:]) for b in x.split(batch)]


def image_batches(n, batch, size, seed):
    """n batches of 10 classes, each a fixed random image seen through heavy noise."""
    g = torch.Generator(device="cuda").manual_seed(1234)
    protos = torch.randn(10, 3, size, size, device="cuda", generator=g)
    data = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for _ in range(n):
        y = torch.randint(0, 10, (batch,), device="cuda", generator=data)
        out.append((protos[y] + 2.0 * torch.randn(batch, 3, size, size, device="cuda", generator=data), y))
    return out


def build(model_name, variant):
    if model_name == "gpt":
        model = GPT(seq=1024).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)
        forward = lambda x, y: model(x, y)  # noqa: E731  (the loss is computed inside)
    else:
        import torchvision
        model = torchvision.models.resnet50(num_classes=10).cuda()
        if variant == "autocast_cl":
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
        forward = lambda x, y: criterion(model(x), y)  # noqa: E731  (a loss module after the model)
    return model, opt, forward


def train_step(forward, opt, x, y, variant):
    if variant.startswith("autocast"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward(x, y)
    else:
        loss = forward(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def run(a):
    torch.manual_seed(a.seed)
    model, opt, forward = build(a.model, a.variant)
    # Prepared up front, so that neither timing nor curves include making data.
    n = min(a.curve or (a.warmup + a.steps), 64)
    data = gpt_batches(n, a.batch, a.seq, 1 + a.seed) if a.model == "gpt" else image_batches(n, a.batch, a.size, 1 + a.seed)
    seen = []
    model.register_forward_pre_hook(lambda m, args: seen.append(torch.is_autocast_enabled("cuda")) if len(seen) < 1 else None)
    if a.variant == "autocast_cl":
        data = [(x.to(memory_format=torch.channels_last), y) for x, y in data]
    stale = torch.autocast("cuda", dtype=torch.bfloat16) if a.variant == "stale" else None
    if stale:
        stale.__enter__()  # not left until the run ends: the broken hook
    row = {"model": a.model, "variant": a.variant, "seed": a.seed, "label": a.label}
    if a.curve:
        losses = []
        for i in range(a.curve):
            x, y = data[i % len(data)]
            losses.append(train_step(forward, opt, x, y, a.variant).detach())
        row["losses"] = [round(v, 5) for v in torch.stack(losses).float().tolist()]
        row["final"] = sum(row["losses"][-20:]) / 20
    else:
        for i in range(a.warmup):
            train_step(forward, opt, *data[i % len(data)], a.variant)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(a.steps):
            loss = train_step(forward, opt, *data[i % len(data)], a.variant)
        torch.cuda.synchronize()
        dt = time.perf_counter() - start
        per_step = a.batch * (a.seq if a.model == "gpt" else 1)
        row["per_s"] = per_step * a.steps / dt
        row["unit"] = "tokens/s" if a.model == "gpt" else "images/s"
        row["loss"] = loss.item()
        assert math.isfinite(row["loss"]), "loss is not finite"
    if stale:
        stale.__exit__(None, None, None)  # so the next run in this process is not under it
    row["param_dtype"] = str(next(model.parameters()).dtype)
    row["autocast_in_forward"] = seen[0] if seen else None
    row["tf32_override"] = os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")
    row["hook"] = "gpuenv_precision" in sys.modules
    print(json.dumps(row), flush=True)
    del model, opt, forward, data
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["gpt", "resnet"], default="gpt")
    p.add_argument("--variant", choices=["fp32", "autocast", "stale", "autocast_cl"], default="fp32")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--curve", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label", default="")
    # Several runs in one process: their arguments separated by "--next".
    chunk = []
    for w in sys.argv[1:] + ["--next"]:
        if w != "--next":
            chunk.append(w)
        elif chunk:
            run(p.parse_args(chunk))
            chunk = []


if __name__ == "__main__":
    main()
