"""Issue 40 item 5: what this machine's Python offers for FP8 training on
Hopper, and what a GPT-2- and Llama-shaped training step gains from it over
bf16 autocast. Prints what is importable (torchao's float8, Transformer
Engine, torch._scaled_mm), then, per shape, the step time (forward, backward,
AdamW) of a stack of transformer layers under bf16 autocast and with every
Linear through an FP8 linear written on torch._scaled_mm (dynamic per-tensor
scales: e4m3 for weights and activations, e5m2 for gradients, the transposes
the backward needs), the GEMMs alone, and the FP8 layer's output error
against bf16. One JSON line per shape, a table last.
  python3 tests/gpu/fp8_probe.py"""
import importlib
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def available():
    out = {"torch": torch.__version__, "scaled_mm": hasattr(torch, "_scaled_mm")}
    for mod in ("torchao", "torchao.float8", "transformer_engine", "transformer_engine.pytorch"):
        try:
            m = importlib.import_module(mod)
            out[mod] = getattr(m, "__version__", "importable")
        except Exception as e:  # absent or broken: say which
            out[mod] = "no (%s)" % type(e).__name__
    return out


def quant(t, dtype):
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = amax / torch.finfo(dtype).max
    return (t.float() / scale).to(dtype), scale


def col_major(t):
    return t.t().contiguous().t()


class FP8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).to(torch.bfloat16)
        xq, sx = quant(x2, E4M3)
        wq, sw = quant(w, E4M3)
        y = torch._scaled_mm(xq, wq.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)
        ctx.save_for_backward(xq, sx, wq, sw)
        ctx.shape = shape
        return y.reshape(*shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, dy):
        xq, sx, wq, sw = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dq, sd = quant(dy2, E5M2)
        dx = torch._scaled_mm(dq, col_major(wq), scale_a=sd, scale_b=sw, out_dtype=torch.bfloat16)
        dw = torch._scaled_mm(dq.t().contiguous(), col_major(xq), scale_a=sd, scale_b=sx, out_dtype=torch.bfloat16)
        return dx.reshape(ctx.shape), dw.to(torch.float32)


class Linear(nn.Linear):
    fp8 = False

    def forward(self, x):
        return FP8Matmul.apply(x, self.weight) if Linear.fp8 else super().forward(x)


class Layer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = Linear(d, 3 * d, bias=False), Linear(d, d, bias=False)
        self.gate, self.up, self.down = Linear(d, ffn, bias=False), Linear(d, ffn, bias=False), Linear(ffn, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(y)
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def time_ms(fn, reps=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def shape_run(name, d, heads, ffn, layers, batch, seq):
    torch.manual_seed(0)
    model = nn.Sequential(*[Layer(d, heads, ffn) for _ in range(layers)]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(batch, seq, d, device="cuda")

    def step():
        with torch.autocast("cuda", torch.bfloat16):
            y = model(x)
        y.float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    row = {"shape": name, "d": d, "ffn": ffn, "layers": layers, "tokens": batch * seq}
    Linear.fp8 = False
    row["bf16_step_ms"] = time_ms(step)
    Linear.fp8 = True
    row["fp8_step_ms"] = time_ms(step)
    # The GEMMs alone (forward and both backward products of every Linear).
    t = batch * seq
    a = torch.randn(t, d, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(ffn, d, device="cuda", dtype=torch.bfloat16)
    aq, sa = quant(a, E4M3)
    wq, sw = quant(w, E4M3)
    row["gemm_bf16_ms"] = time_ms(lambda: a @ w.t(), 20)
    row["gemm_fp8_ms"] = time_ms(lambda: torch._scaled_mm(aq, wq.t(), scale_a=sa, scale_b=sw, out_dtype=torch.bfloat16), 20)
    flops = 2 * t * d * ffn
    row["gemm_bf16_tflops"] = round(flops / row["gemm_bf16_ms"] / 1e9, 1)
    row["gemm_fp8_tflops"] = round(flops / row["gemm_fp8_ms"] / 1e9, 1)
    # Error of one FP8 layer's output against bf16, on fresh inputs.
    layer = model[0]
    xin = torch.randn(batch, seq, d, device="cuda")
    with torch.no_grad(), torch.autocast("cuda", torch.bfloat16):
        Linear.fp8 = False
        ref = layer(xin).float()
        Linear.fp8 = True
        got = layer(xin).float()
    Linear.fp8 = False
    row["fp8_rel_error"] = float((got - ref).norm() / ref.norm())
    row["step_gain"] = round(row["bf16_step_ms"] / row["fp8_step_ms"], 3)
    row["gemm_gain"] = round(row["gemm_bf16_ms"] / row["gemm_fp8_ms"], 3)
    del model, opt
    torch.cuda.empty_cache()
    return row


SHAPES = [
    ("gpt2-small layers", 768, 12, 3072, 12, 8, 1024),
    ("llama-1B layers", 2048, 32, 8192, 8, 4, 2048),
    ("llama-8B layers", 4096, 32, 14336, 4, 2, 4096),
]


def main():
    avail = available()
    print(json.dumps({"available": avail, "gpu": torch.cuda.get_device_name()}), flush=True)
    if not avail["scaled_mm"]:
        sys.exit("torch._scaled_mm is missing: no FP8 path to measure")
    rows = []
    for s in SHAPES:
        try:
            rows.append(shape_run(*s))
        except Exception as e:
            rows.append({"shape": s[0], "error": repr(e)[:300]})
        print(json.dumps(rows[-1]), flush=True)
    print("\n| shape | tokens | bf16 step ms | fp8 step ms | step gain | GEMM bf16 / fp8 TFLOP/s | FP8 layer error |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print("| %s | error: %s |" % (r["shape"], r["error"][:80]))
            continue
        print("| %s | %d | %.2f | %.2f | %.2fx | %.0f / %.0f | %.4f |" % (
            r["shape"], r["tokens"], r["bf16_step_ms"], r["fp8_step_ms"], r["step_gain"],
            r["gemm_bf16_tflops"], r["gemm_fp8_tflops"], r["fp8_rel_error"]))
    sys.exit(1 if any("error" in r for r in rows) else 0)


if __name__ == "__main__":
    main()
