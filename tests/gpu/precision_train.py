"""`gpuenv run --tune=+precision` on real torch (tests/gpu/precision.sh runs it):
GPT-2 small and ResNet-50 written in fp32, timed and trained on seeded,
learnable synthetic data. One JSON line per run.

  --variant fp32      the script as written (under --tune=+precision: the hook's bf16)
  --variant autocast  the same with torch.autocast("cuda", torch.bfloat16) written in by hand
  --variant stale     the broken hook: one autocast region entered before training and never
                      left, so autocast's cast cache keeps the step-0 bf16 weights
  --variant autocast_cl  ResNet only: hand-written autocast with channels_last

--curve N: N seeded steps, every loss printed. Without it: tokens (or images)/s.
--task patterns: ResNet's learnable data (pattern_batches); --compile: torch.compile(model).
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


def pattern_batches(n, batch, size, seed, label_noise=0.25):
    """n batches of 10 classes that a convnet learns in a few hundred steps:
    class c is a fixed colour and a fixed low-frequency grating (its
    orientation and frequency), at a random phase, in noise of std 1; a
    quarter of the labels are then drawn at random. The loss falls from
    ln 10 = 2.30 towards the floor those random labels leave,
    -(0.775 ln 0.775 + 9 * 0.025 ln 0.025) = 1.03, and stays off 0, where
    relative gaps between curves would mean nothing."""
    g = torch.Generator(device="cuda").manual_seed(1234)
    colours = torch.randn(10, 3, 1, 1, device="cuda", generator=g)
    angle = torch.arange(10, device="cuda") * (math.pi / 10)
    freq = 2 * math.pi * (1 + torch.arange(10, device="cuda") % 3) / size
    ys, xs = torch.meshgrid(torch.arange(size, device="cuda", dtype=torch.float32),
                            torch.arange(size, device="cuda", dtype=torch.float32), indexing="ij")
    data = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for _ in range(n):
        y = torch.randint(0, 10, (batch,), device="cuda", generator=data)
        phase = 2 * math.pi * torch.rand(batch, 1, 1, device="cuda", generator=data)
        u = xs * torch.cos(angle[y]).view(-1, 1, 1) + ys * torch.sin(angle[y]).view(-1, 1, 1)
        grating = torch.sin(freq[y].view(-1, 1, 1) * u + phase).unsqueeze(1)
        x = 0.5 * colours[y] + grating + torch.randn(batch, 3, size, size, device="cuda", generator=data)
        flip = torch.rand(batch, device="cuda", generator=data) < label_noise
        y = torch.where(flip, torch.randint(0, 10, (batch,), device="cuda", generator=data), y)
        out.append((x, y))
    return out


def build(model_name, variant, lr=None, compile_it=False):
    if model_name == "gpt":
        model = GPT(seq=1024).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=lr or 6e-4, fused=True)
    else:
        import torchvision
        model = torchvision.models.resnet50(num_classes=10).cuda()
        if variant == "autocast_cl":
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=lr or 0.05, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
    if compile_it:
        # As users write it: the model compiled, called from the same loop. Its forward pre-hook
        # (autocast_in_forward) goes on the compiled wrapper, which runs outside the graph.
        model = torch.compile(model)
    if model_name == "gpt":
        forward = lambda x, y: model(x, y)  # noqa: E731  (the loss is computed inside)
    else:
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
    model, opt, forward = build(a.model, a.variant, a.lr, a.compile)
    # Prepared up front, so that neither timing nor curves include making data.
    n = min(a.curve or (a.warmup + a.steps), 64)
    if a.model == "gpt":
        data = gpt_batches(n, a.batch, a.seq, 1 + a.seed)
    elif a.task == "patterns":
        data = pattern_batches(n, a.batch, a.size, 1 + a.seed)
    else:
        data = image_batches(n, a.batch, a.size, 1 + a.seed)
    seen = []
    model.register_forward_pre_hook(lambda m, args: seen.append(torch.is_autocast_enabled("cuda")) if len(seen) < 1 else None)
    if a.variant == "autocast_cl":
        data = [(x.to(memory_format=torch.channels_last), y) for x, y in data]
    stale = torch.autocast("cuda", dtype=torch.bfloat16) if a.variant == "stale" else None
    if stale:
        stale.__enter__()  # not left until the run ends: the broken hook
    row = {"model": a.model, "variant": a.variant, "seed": a.seed, "label": a.label, "task": a.task,
           "compile": a.compile,
           "shape": "B%dx%d" % (a.batch, a.seq if a.model == "gpt" else a.size)}
    if a.curve:
        losses = []
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(a.curve):
            if a.lr_warmup:  # linear warm-up of the learning rate over the first lr_warmup steps
                for group in opt.param_groups:
                    group["lr"] = group.setdefault("peak_lr", group["lr"]) * min(1.0, (i + 1) / a.lr_warmup)
            x, y = data[i % len(data)]
            losses.append(train_step(forward, opt, x, y, a.variant).detach())
        torch.cuda.synchronize()
        row["curve_s"] = time.perf_counter() - start  # every step of the curve, the first ones' start-up included
        row["losses"] = [round(v, 5) for v in torch.stack(losses).float().tolist()]
        row["final"] = sum(row["losses"][-20:]) / 20
    else:
        t0 = time.perf_counter()
        train_step(forward, opt, *data[0], a.variant)
        torch.cuda.synchronize()
        row["first_step_s"] = time.perf_counter() - t0  # with --compile: the compile
        for i in range(1, a.warmup):
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
    if a.compile:
        row["dynamo"] = dynamo_counters()
    print(json.dumps(row), flush=True)
    del model, opt, forward, data
    torch.cuda.empty_cache()


def dynamo_counters():
    """What Dynamo counted in this process so far: graphs, graph breaks and
    their reasons, recompiles (torch._dynamo.utils.counters)."""
    from torch._dynamo.utils import counters
    return {k: {str(r): n for r, n in v.items()} for k, v in counters.items()
            if k in ("stats", "frames", "graph_break", "recompiles", "unimplemented")}


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
    p.add_argument("--task", choices=["prototypes", "patterns"], default="prototypes",
                   help="ResNet's data: noisy random prototypes, or pattern_batches (learnable in 300 steps)")
    p.add_argument("--lr", type=float, default=None, help="default: AdamW 6e-4 (GPT), SGD 0.05 (ResNet)")
    p.add_argument("--lr-warmup", type=int, default=0, help="--curve: the learning rate rises linearly over N steps")
    p.add_argument("--compile", action="store_true", help="torch.compile(model), the loop unchanged")
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
