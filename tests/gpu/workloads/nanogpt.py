"""A nanoGPT-style training loop (karpathy/nanoGPT's train.py and model.py,
by their published structure, written here): its own TF32 flags, a bf16
autocast context, torch.compile, no DataLoader — random batches cut from a
memmapped uint16 token file, pinned and copied non_blocking —, gradient
accumulation, gradient clipping, fused AdamW, and a forward that returns
`logits, loss`, which the loop keeps alive through backward. GPT-2 small
(12 layers, 768 wide, block 1024, vocab 50304). Prints one JSON line:
tokens/s over the iterations after the warm-up (each iteration
`--accum` micro-batches)."""
import argparse
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Meter


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.n_head, self.n_embd, self.dropout = c.n_head, c.n_embd, c.dropout
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (z.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(c.n_embd, bias=c.bias), CausalSelfAttention(c)
        self.ln_2, self.mlp = nn.LayerNorm(c.n_embd, bias=c.bias), MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c.vocab_size, c.n_embd), wpe=nn.Embedding(c.block_size, c.n_embd),
            drop=nn.Dropout(c.dropout), h=nn.ModuleList(Block(c) for _ in range(c.n_layer)),
            ln_f=nn.LayerNorm(c.n_embd, bias=c.bias)))
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=True)


class Config:
    block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias = 1024, 50304, 12, 12, 768, 0.0, True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--warmup", type=int, default=6)
    p.add_argument("--batch_size", type=int, default=12)
    p.add_argument("--gradient_accumulation_steps", "--accum", type=int, default=4)
    p.add_argument("--compile", type=int, default=1)
    a = p.parse_args()
    c = Config()
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
    torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    # The token file: what prepare.py writes (uint16 GPT-2 token ids), here random.
    path = os.path.join(tempfile.mkdtemp(), "train.bin")
    np.random.default_rng(0).integers(0, 50257, 8_000_000, dtype=np.uint16).tofile(path)

    def get_batch():
        data = np.memmap(path, dtype=np.uint16, mode="r")  # a new memmap per batch, as nanoGPT does
        ix = torch.randint(len(data) - c.block_size, (a.batch_size,))
        x = torch.stack([torch.from_numpy(data[i:i + c.block_size].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + c.block_size].astype(np.int64)) for i in ix])
        return x.pin_memory().to("cuda", non_blocking=True), y.pin_memory().to("cuda", non_blocking=True)

    model = GPT(c).to("cuda")
    scaler = torch.amp.GradScaler("cuda", enabled=False)  # bf16: no scaling
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
    if a.compile:
        model = torch.compile(model)
    meter = Meter(a.warmup)
    X, Y = get_batch()
    for it in range(a.iters):
        for micro_step in range(a.gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / a.gradient_accumulation_steps
            X, Y = get_batch()
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        meter.tick(a.batch_size * a.gradient_accumulation_steps * c.block_size)
    meter.report("nanogpt", "tokens/s", loss=round(loss.item() * a.gradient_accumulation_steps, 4),
                 compiled=bool(a.compile))


if __name__ == "__main__":
    main()
