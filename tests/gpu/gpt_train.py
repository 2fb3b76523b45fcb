"""A GPT-2-small training loop on synthetic data, for measuring what the
environment does to PyTorch: tokens/s in fp32 (TF32 or not), and the time
to the first compiled step (compile caches). Prints one JSON line."""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=50304, seq=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def compile_counters():
    """Dynamo/Inductor's own counters: which caches hit, and where the
    compile time went."""
    from torch._dynamo.utils import counters, compile_times
    keep = ("inductor", "aot_autograd", "stats", "frames")
    out = {k: dict(counters[k]) for k in keep if k in counters}
    try:
        out["compile_times"] = compile_times(repr="csv", aggregate=True)
    except Exception as e:  # the signature changed between releases
        out["compile_times"] = repr(e)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--label", default="")
    p.add_argument("--fp32", action="store_true", help="ask for full fp32 matmuls (\"highest\"), as a script may")
    p.add_argument("--seconds", type=float, default=0, help="train at least this long (after --steps)")
    a = p.parse_args()
    if a.fp32:
        torch.set_float32_matmul_precision("highest")
    t0 = time.perf_counter()
    torch.manual_seed(0)
    dev = "cuda"
    model = GPT(seq=a.seq).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    step_fn = torch.compile(model) if a.compile else model
    torch.cuda.synchronize()
    model_ready_s = time.perf_counter() - t0
    gen = torch.Generator(device=dev).manual_seed(1)

    def step():
        # Next-token targets on random tokens: the loss stays near ln(50304).
        x = torch.randint(0, 50304, (a.batch, a.seq + 1), device=dev, generator=gen)
        loss = step_fn(x[:, :-1], x[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    loss = step()
    torch.cuda.synchronize()
    first_step_s = time.perf_counter() - t0
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    done = 0
    while done < a.steps or time.perf_counter() - start < a.seconds:
        loss = step()
        done += 1
    torch.cuda.synchronize()
    dt = time.perf_counter() - start
    assert math.isfinite(loss.item()), "loss is not finite"
    print(json.dumps({
        "label": a.label,
        "tokens_per_s": a.batch * a.seq * done / dt,
        "first_step_s": first_step_s,
        "model_ready_s": model_ready_s,
        "compile_counters": compile_counters() if a.compile else None,
        "loss": loss.item(),
        "compile": a.compile,
        "tf32_override": os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"),
        "fp32_precision": torch.backends.cuda.matmul.fp32_precision
        if hasattr(torch.backends.cuda.matmul, "fp32_precision") else None,
        "inductor_cache": os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }), flush=True)


if __name__ == "__main__":
    main()
