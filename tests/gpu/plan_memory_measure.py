"""Measures the peak GPU memory of real training steps, for `gpuenv plan-memory`.

Plain-PyTorch GPT-2 style and Llama style models (the shapes plan-memory takes),
synthetic tokens, 3 steps; the peak is torch.cuda.max_memory_allocated() over the
steps, with the model and the batch already on the GPU. Also records where memory
stands after model init, at the end of the first forward + loss, and after the first
optimizer step, so each component of the prediction can be checked.

  python3 plan_memory_measure.py --suite            # every config below, one JSON line each
  python3 plan_memory_measure.py --arch llama ...   # one config (plan-memory's flags)
  python3 plan_memory_measure.py --max-batch ...    # largest batch that trains (each try in
                                                    # its own process; OOM = does not fit)
"""
import argparse
import json
import math
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt

# name, flags: ~100 M to ~1 B parameters, both families, fp32 and bf16-mixed,
# with and without checkpointing.
SUITE = [
    ("gpt2-124M fp32", "--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 --batch 8 --precision fp32"),
    ("gpt2-124M bf16", "--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 --batch 8 --precision bf16-mixed"),
    ("gpt2-124M bf16 ckpt", "--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 --batch 16 --precision bf16-mixed --checkpointing"),
    ("gpt2-124M fp32 fused", "--arch gpt2 --hidden 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 --batch 8 --precision fp32 --fused-optimizer"),
    ("gpt2-350M fp32", "--arch gpt2 --hidden 1024 --layers 24 --heads 16 --vocab 50257 --seq 1024 --batch 8 --precision fp32"),
    ("gpt2-350M bf16 ckpt", "--arch gpt2 --hidden 1024 --layers 24 --heads 16 --vocab 50257 --seq 1024 --batch 16 --precision bf16-mixed --checkpointing"),
    ("gpt2-774M bf16", "--arch gpt2 --hidden 1280 --layers 36 --heads 20 --vocab 50257 --seq 1024 --batch 4 --precision bf16-mixed"),
    ("gpt2-774M fp32 ckpt", "--arch gpt2 --hidden 1280 --layers 36 --heads 20 --vocab 50257 --seq 1024 --batch 8 --precision fp32 --checkpointing"),
    ("llama-125M fp32", "--arch llama --hidden 768 --layers 12 --heads 12 --kv-heads 4 --ffn 2048 --vocab 32000 --seq 2048 --batch 4 --precision fp32"),
    ("llama-125M bf16", "--arch llama --hidden 768 --layers 12 --heads 12 --kv-heads 4 --ffn 2048 --vocab 32000 --seq 2048 --batch 8 --precision bf16-mixed"),
    ("llama-350M bf16 ckpt", "--arch llama --hidden 1024 --layers 24 --heads 16 --kv-heads 8 --ffn 2816 --vocab 32000 --seq 2048 --batch 8 --precision bf16-mixed --checkpointing"),
    ("llama-350M fp32", "--arch llama --hidden 1024 --layers 24 --heads 16 --kv-heads 8 --ffn 2816 --vocab 32000 --seq 2048 --batch 4 --precision fp32"),
    ("llama-1B bf16", "--arch llama --hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tied --seq 2048 --batch 2 --precision bf16-mixed"),
    ("llama-1B fp32 ckpt", "--arch llama --hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tied --seq 2048 --batch 4 --precision fp32 --checkpointing"),
    ("llama-1B bf16 sgd", "--arch llama --hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tied --seq 2048 --batch 2 --precision bf16-mixed --optimizer sgd"),
    # Qwen2-0.5B's shape (Llama's blocks, 2 KV heads, a 151936-token tied vocabulary): logits dominate.
    ("qwen2-0.5B bf16", "--arch llama --hidden 896 --layers 24 --heads 14 --kv-heads 2 --ffn 4864 --vocab 151936 --tied --seq 2048 --batch 4 --precision bf16-mixed"),
]
# Both loop shapes (issue 40): plan-memory --keeps-logits / --frees-logits.
LOOPS = [row for row in SUITE if row[0] in ("gpt2-124M fp32", "gpt2-124M bf16", "llama-125M bf16", "llama-1B bf16",
                                            "qwen2-0.5B bf16")]
# The edge check: a ~1 B model whose largest batch is small.
EDGE = "--arch llama --hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tied --seq 8192 --batch 1 --precision bf16-mixed"


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class GPT2Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        d = a.hidden
        self.heads = a.heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, a.ffn)
        self.out = nn.Linear(a.ffn, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class LlamaBlock(nn.Module):
    def __init__(self, a):
        super().__init__()
        d = a.hidden
        self.heads, self.kv, self.hd = a.heads, a.kv_heads, d // a.heads
        self.n1 = RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, self.kv * self.hd, bias=False)
        self.v = nn.Linear(d, self.kv * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.n2 = RMSNorm(d)
        self.gate = nn.Linear(d, a.ffn, bias=False)
        self.up = nn.Linear(d, a.ffn, bias=False)
        self.down = nn.Linear(a.ffn, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.heads)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a
        self.tok = nn.Embedding(a.vocab, a.hidden)
        if a.arch == "gpt2":
            self.pos = nn.Embedding(a.seq, a.hidden)
            self.blocks = nn.ModuleList(GPT2Block(a) for _ in range(a.layers))
            self.norm = nn.LayerNorm(a.hidden)
        else:
            self.blocks = nn.ModuleList(LlamaBlock(a) for _ in range(a.layers))
            self.norm = RMSNorm(a.hidden)
            hd = a.hidden // a.heads
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
            f = torch.outer(torch.arange(a.seq).float(), inv)
            f = torch.cat((f, f), dim=-1)
            self.register_buffer("cos", f.cos(), persistent=False)
            self.register_buffer("sin", f.sin(), persistent=False)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        if a.tied:
            self.head.weight = self.tok.weight

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.tok(idx)
        if self.a.arch == "gpt2":
            x = x + self.pos(torch.arange(t, device=idx.device))
            extra = ()
        else:
            extra = (self.cos[:t], self.sin[:t])
        for blk in self.blocks:
            if self.a.checkpointing:
                x = ckpt.checkpoint(blk, x, *extra, use_reentrant=False)
            else:
                x = blk(x, *extra)
        logits = self.head(self.norm(x))
        return logits, F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1))


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--suite", action="store_true")
    p.add_argument("--max-batch", action="store_true")
    p.add_argument("--arch", choices=["gpt2", "llama"])
    p.add_argument("--hidden", type=int)
    p.add_argument("--layers", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--kv-heads", type=int)
    p.add_argument("--ffn", type=int)
    p.add_argument("--vocab", type=int)
    p.add_argument("--tied", action="store_true", default=None)
    p.add_argument("--untied", dest="tied", action="store_false")
    p.add_argument("--seq", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16-mixed", "fp16-mixed", "bf16"])
    p.add_argument("--optimizer", default="adamw", choices=["adamw", "sgd", "adafactor"])
    p.add_argument("--fused-optimizer", action="store_true")
    p.add_argument("--checkpointing", action="store_true")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--loop", default="frees", choices=["frees", "keeps"],
                   help="keeps: the loop holds the logits through backward (plan-memory --keeps-logits)")
    p.add_argument("--loops", action="store_true", help="LOOPS, each config in both loop shapes")
    a = p.parse_args(argv)
    if a.arch:
        if a.kv_heads is None:
            a.kv_heads = a.heads
        if a.ffn is None:
            a.ffn = 4 * a.hidden if a.arch == "gpt2" else a.hidden * 8 // 3
        if a.tied is None:
            a.tied = a.arch == "gpt2"
    return a


def sdpa_fused(a, dtype):
    """Whether a flash or memory-efficient SDPA kernel takes this shape (else
    the math kernel runs and saves the T x T attention matrix)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    hd = a.hidden // a.heads
    q = torch.randn(1, a.heads, 16, hd, device="cuda", dtype=dtype, requires_grad=True)
    k = torch.randn(1, a.kv_heads, 16, hd, device="cuda", dtype=dtype, requires_grad=True)
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            F.scaled_dot_product_attention(q, k, k, is_causal=True,
                                           enable_gqa=a.kv_heads != a.heads).sum().backward()
        return True
    except RuntimeError:
        return False


def params(model):
    return sum(p.numel() for p in model.parameters())


def measure(a):
    torch.manual_seed(0)
    dev = "cuda"
    dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
    model = Model(a).to(dev, dtype)
    if a.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True if a.fused_optimizer else None)
    elif a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    else:
        opt = torch.optim.Adafactor(model.parameters(), lr=1e-4)
    idx = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
    tgt = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
    scaler = torch.amp.GradScaler("cuda") if a.precision == "fp16-mixed" else None
    amp = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}.get(a.precision)
    compute = amp or dtype
    fused = sdpa_fused(a, compute)
    torch.cuda.synchronize()
    out = {"params": params(model), "after_init": torch.cuda.memory_allocated(), "sdpa_fused": fused}
    torch.cuda.reset_peak_memory_stats()
    for step in range(a.steps):
        with torch.autocast("cuda", amp, enabled=amp is not None):
            if a.loop == "keeps":  # nanoGPT's `logits, loss = model(X, Y)`: held until the next forward returns
                logits, loss = model(idx, tgt)
            else:  # only the loss survives the forward (Trainer's compute_loss)
                loss = model(idx, tgt)[1]
        if step == 0:
            torch.cuda.synchronize()
            out["after_forward"] = torch.cuda.memory_allocated()
            out["peak_forward"] = torch.cuda.max_memory_allocated()
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        if step == 0:
            torch.cuda.synchronize()
            out["after_step"] = torch.cuda.memory_allocated()
        del loss
    torch.cuda.synchronize()
    out["peak"] = torch.cuda.max_memory_allocated()
    out["peak_reserved"] = torch.cuda.max_memory_reserved()
    return out


def fits(argv, prefix=()):
    """Trains in a fresh process (under `prefix`, e.g. gpuenv run --): True,
    False on OutOfMemoryError."""
    r = subprocess.run(list(prefix) + [sys.executable, __file__] + argv, capture_output=True, text=True)
    if r.returncode == 0:
        return True
    if "OutOfMemoryError" in r.stderr or "out of memory" in r.stderr:
        return False
    raise RuntimeError(r.stderr[-2000:])


def max_batch(argv):
    """Largest batch that trains: doubling, then bisection."""
    base = [x for x in argv if x != "--max-batch"]
    i = base.index("--batch")
    def ok(b):
        return fits(base[:i + 1] + [str(b)] + base[i + 2:])
    lo, hi = 0, 1
    while ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def main():
    a = parse(sys.argv[1:])
    env = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "total_bytes": torch.cuda.get_device_properties(0).total_memory}
    if a.loops:
        suite = [("%s %s" % (n, loop), "%s --loop %s" % (f, loop)) for n, f in LOOPS for loop in ("frees", "keeps")]
    if a.suite or a.loops:
        for name, flags in (suite if a.loops else SUITE):
            r = subprocess.run([sys.executable, __file__] + flags.split(), capture_output=True, text=True)
            row = {"name": name, "flags": flags, **env}
            if r.returncode == 0:
                row.update(json.loads(r.stdout.strip().splitlines()[-1])["measured"])
            else:
                row["error"] = r.stderr[-1500:]
            print(json.dumps(row), flush=True)
        if a.loops:
            return
        edge = EDGE.split()
        print(json.dumps({"name": "edge", "flags": EDGE, "max_batch": max_batch(edge), **env}), flush=True)
        return
    if a.max_batch:
        print(json.dumps({"flags": " ".join(sys.argv[1:]), "max_batch": max_batch(sys.argv[1:]), **env}))
        return
    print(json.dumps({"measured": measure(a)}))


if __name__ == "__main__":
    main()
