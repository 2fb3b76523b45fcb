"""Measures the peak GPU memory of Hugging Face models as users train them, for
`gpuenv plan-memory --config`.

A model built from a config.json (random init, no weights) with
AutoModelForCausalLM.from_config, trained in train() mode (dropout on) as users
do: `model(input_ids=ids, labels=ids).loss`, backward, AdamW (fused with
--fused-optimizer, else foreach), zero_grad(set_to_none=True), 3 steps. bf16-mixed is
torch.autocast around forward + loss with an fp32 model; bf16 is the model built
with dtype=bfloat16; --checkpointing is model.gradient_checkpointing_enable();
--lora-rank is peft's LoRA on the targets (the base frozen in its dtype). The peak
is torch.cuda.max_memory_allocated() over the steps.

  python3 hf_memory_measure.py --suite [--out FILE]     # SUITE, one JSON line each
  python3 hf_memory_measure.py --config FILE --seq T --batch B [plan-memory flags]
  python3 hf_memory_measure.py --probe                  # saved tensors per layer, per family
"""
import argparse
import gc
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "memory", "hf")

# name, config (tests/memory/hf/NAME.json), plan-memory's training flags.
SUITE = [
    ("llama-1b bf16-mixed", "llama-1b", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("llama-1b fp32 ckpt", "llama-1b", "--seq 2048 --batch 8 --precision fp32 --checkpointing --fused-optimizer"),
    ("llama-1b bf16", "llama-1b", "--seq 2048 --batch 4 --precision bf16 --fused-optimizer"),
    ("tinyllama bf16-mixed ckpt", "tinyllama", "--seq 2048 --batch 8 --precision bf16-mixed --checkpointing --fused-optimizer"),
    ("tinyllama fp32", "tinyllama", "--seq 1024 --batch 4 --precision fp32 --fused-optimizer"),
    ("mistral bf16-mixed", "mistral-s", "--seq 2048 --batch 8 --precision bf16-mixed --fused-optimizer"),
    ("mistral fp32", "mistral-s", "--seq 1024 --batch 8 --precision fp32 --fused-optimizer"),
    ("mistral bf16 ckpt", "mistral-s", "--seq 4096 --batch 8 --precision bf16 --checkpointing --fused-optimizer"),
    ("qwen2 bf16-mixed", "qwen2.5-0.5b", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("qwen2 fp32 ckpt", "qwen2.5-0.5b", "--seq 1024 --batch 8 --precision fp32 --checkpointing --fused-optimizer"),
    ("qwen2 bf16", "qwen2.5-0.5b", "--seq 2048 --batch 8 --precision bf16 --fused-optimizer"),
    ("qwen3 bf16-mixed", "qwen3-0.6b", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("qwen3 fp32", "qwen3-0.6b", "--seq 1024 --batch 4 --precision fp32 --fused-optimizer"),
    ("qwen3 bf16 ckpt", "qwen3-0.6b", "--seq 4096 --batch 4 --precision bf16 --checkpointing --fused-optimizer"),
    ("gemma2 bf16-mixed", "gemma2-s", "--seq 1024 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("gemma2 fp32 ckpt", "gemma2-s", "--seq 1024 --batch 4 --precision fp32 --checkpointing --fused-optimizer"),
    ("gemma3 bf16-mixed", "gemma3-1b", "--seq 2048 --batch 2 --precision bf16-mixed --fused-optimizer"),
    ("gemma3 bf16 ckpt", "gemma3-1b", "--seq 2048 --batch 4 --precision bf16 --checkpointing --fused-optimizer"),
    ("gemma3 fp32", "gemma3-1b", "--seq 1024 --batch 2 --precision fp32 --fused-optimizer"),
    ("phi3 bf16-mixed", "phi3-s", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("phi3 fp32", "phi3-s", "--seq 2048 --batch 2 --precision fp32 --fused-optimizer"),
    ("gpt2 fp32", "gpt2", "--seq 1024 --batch 8 --precision fp32 --fused-optimizer"),
    ("gpt2 bf16-mixed ckpt", "gpt2", "--seq 1024 --batch 16 --precision bf16-mixed --checkpointing --fused-optimizer"),
    ("gpt2 bf16", "gpt2", "--seq 1024 --batch 8 --precision bf16 --fused-optimizer"),
    ("gpt2-medium bf16-mixed", "gpt2-medium", "--seq 1024 --batch 8 --precision bf16-mixed --fused-optimizer"),
    ("pythia-410m bf16-mixed", "pythia-410m", "--seq 2048 --batch 8 --precision bf16-mixed --fused-optimizer"),
    ("pythia-410m fp32", "pythia-410m", "--seq 2048 --batch 4 --precision fp32 --fused-optimizer"),
    ("olmo2 bf16-mixed", "olmo2-s", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("olmo2 fp32 ckpt", "olmo2-s", "--seq 2048 --batch 8 --precision fp32 --checkpointing --fused-optimizer"),
    ("mixtral bf16-mixed", "mixtral-s", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("mixtral fp32", "mixtral-s", "--seq 1024 --batch 4 --precision fp32 --fused-optimizer"),
    ("qwen3moe bf16-mixed", "qwen3moe-s", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("qwen3moe bf16 ckpt", "qwen3moe-s", "--seq 2048 --batch 4 --precision bf16 --checkpointing --fused-optimizer"),
    ("llama-1b lora bf16", "llama-1b", "--seq 2048 --batch 4 --precision bf16 --lora-rank 16 --fused-optimizer"),
    ("llama-1b lora bf16 all ckpt", "llama-1b",
     "--seq 2048 --batch 8 --precision bf16 --lora-rank 16 --lora-targets q,k,v,o,gate,up,down --checkpointing --fused-optimizer"),
    ("qwen2 lora bf16-mixed all", "qwen2.5-0.5b",
     "--seq 2048 --batch 4 --precision bf16-mixed --lora-rank 8 --lora-targets q,k,v,o,gate,up,down --fused-optimizer"),
    ("mistral lora fp32", "mistral-s", "--seq 1024 --batch 8 --precision fp32 --lora-rank 32 --lora-targets q,v --lora-dropout 0 --fused-optimizer"),
    ("gpt2 fp32 foreach", "gpt2", "--seq 1024 --batch 8 --precision fp32"),
    ("llama-1b bf16-mixed foreach", "llama-1b", "--seq 2048 --batch 2 --precision bf16-mixed"),
]

# Attention with a mask (a sliding window shorter than the sequence, or what
# else makes transformers build one): which tensors grow with T x T.
MASK_PROBES = [
    ("pythia-410m", "bf16-mixed", 2048, {"max_position_embeddings": 2048}),
    ("pythia-410m", "bf16-mixed", 1024, {"max_position_embeddings": 2048}),
    ("pythia-410m", "fp32", 2048, {"max_position_embeddings": 2048}),
    ("pythia-410m", "bf16", 2048, {"max_position_embeddings": 2048}),
    ("phi3-s", "bf16-mixed", 1024, {"sliding_window": 511}),
    ("phi3-s", "fp32", 1024, {"sliding_window": 511}),
    ("mistral-s", "bf16-mixed", 1024, {"sliding_window": 256}),
    ("mistral-s", "bf16", 1024, {"sliding_window": 256}),
    ("mistral-s", "fp32", 1024, {"sliding_window": 256}),
    ("llama-1b", "bf16-mixed", 2048, {}),
]

# Held out: measured after the formulas were written, to check them.
VERIFY = [
    ("phi3 bf16-mixed T1024", "phi3-s", "--seq 1024 --batch 8 --precision bf16-mixed --fused-optimizer"),
    ("phi3 bf16 T2048", "phi3-s", "--seq 2048 --batch 4 --precision bf16 --fused-optimizer"),
    ("phi4mini bf16-mixed", "phi4mini-s", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("phi4mini fp32 ckpt", "phi4mini-s", "--seq 1024 --batch 8 --precision fp32 --checkpointing --fused-optimizer"),
    ("mistral window bf16-mixed", "mistral-w1k", "--seq 2048 --batch 4 --precision bf16-mixed --fused-optimizer"),
    ("mistral window bf16", "mistral-w1k", "--seq 4096 --batch 2 --precision bf16 --fused-optimizer"),
    ("mistral window fp32", "mistral-w1k", "--seq 2048 --batch 2 --precision fp32 --fused-optimizer"),
    ("pythia-410m bf16-mixed T1024", "pythia-410m", "--seq 1024 --batch 16 --precision bf16-mixed --fused-optimizer"),
    ("pythia-410m bf16 T2048", "pythia-410m", "--seq 2048 --batch 4 --precision bf16 --fused-optimizer"),
    ("pythia-410m bf16-mixed ckpt", "pythia-410m", "--seq 2048 --batch 8 --precision bf16-mixed --checkpointing --fused-optimizer"),
    ("smollm2-360m bf16-mixed ckpt", "smollm2-360m", "--seq 4096 --batch 8 --precision bf16-mixed --checkpointing --fused-optimizer"),
    ("smollm2-360m fp32", "smollm2-360m", "--seq 2048 --batch 4 --precision fp32"),
    ("gemma2 bf16 B8", "gemma2-s", "--seq 1024 --batch 8 --precision bf16 --fused-optimizer"),
    ("gemma3 bf16-mixed ckpt T4096", "gemma3-1b", "--seq 4096 --batch 2 --precision bf16-mixed --checkpointing --fused-optimizer"),
    ("qwen3 lora bf16 all", "qwen3-0.6b", "--seq 2048 --batch 8 --precision bf16 --lora-rank 32 --lora-targets q,k,v,o,gate,up,down --fused-optimizer"),
    ("qwen2 lora bf16 ckpt dropout0", "qwen2.5-0.5b", "--seq 4096 --batch 4 --precision bf16 --lora-rank 16 --lora-targets q,k,v,o --lora-dropout 0 --checkpointing --fused-optimizer"),
    ("olmo2 bf16", "olmo2-s", "--seq 2048 --batch 8 --precision bf16 --fused-optimizer"),
    ("mixtral bf16 ckpt", "mixtral-s", "--seq 4096 --batch 4 --precision bf16 --checkpointing --fused-optimizer"),
    ("qwen3moe fp32", "qwen3moe-s", "--seq 1024 --batch 4 --precision fp32 --fused-optimizer"),
    ("gpt2-medium fp32 ckpt", "gpt2-medium", "--seq 1024 --batch 16 --precision fp32 --checkpointing --fused-optimizer"),
    ("gpt2 bf16-mixed", "gpt2", "--seq 1024 --batch 16 --precision bf16-mixed"),
    ("tinyllama bf16 lora q,v", "tinyllama", "--seq 2048 --batch 8 --precision bf16 --lora-rank 8"),
]

# peft's module names for plan-memory's --lora-targets.
LORA_NAMES = {
    "llama": {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj",
              "up": "up_proj", "down": "down_proj"},
}


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--suite", action="store_true")
    p.add_argument("--loops", action="store_true", help="LOOPS, each in both loop shapes (issue 40)")
    p.add_argument("--probe", action="store_true")
    p.add_argument("--probe-masks", action="store_true")
    p.add_argument("--out")
    p.add_argument("--only")
    p.add_argument("--config")
    p.add_argument("--seq", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16-mixed", "bf16"])
    p.add_argument("--checkpointing", action="store_true")
    p.add_argument("--fused-optimizer", action="store_true")
    p.add_argument("--lora-rank", type=int, default=0)
    p.add_argument("--lora-targets", default="q,v")
    p.add_argument("--lora-dropout", type=float, default=0.05)
    p.add_argument("--lora-alpha", type=float)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--loop", default="frees", choices=["frees", "keeps"],
                   help="keeps: the loop holds the model's outputs through backward (plan-memory --keeps-logits)")
    return p.parse_args(argv)


def load_config(path):
    from transformers import AutoConfig
    with open(path) as f:
        d = json.load(f)
    d = {k: v for k, v in d.items() if k not in ("architectures", "torch_dtype")}
    return AutoConfig.for_model(**d)


def build(config, dtype):
    from transformers import AutoModelForCausalLM
    with torch.device("cuda"):
        try:
            return AutoModelForCausalLM.from_config(config, dtype=dtype)
        except TypeError:
            return AutoModelForCausalLM.from_config(config, torch_dtype=dtype)


def lora_targets(model, short):
    names = {n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    want = []
    for s in short.split(","):
        cands = [s + "_proj", s, {"o": "o_proj"}.get(s, s)]
        hit = [c for c in cands if c in names]
        want.append(hit[0] if hit else s + "_proj")
    return want


def free():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def measure(a):
    free()
    base = torch.cuda.memory_allocated()
    torch.manual_seed(0)
    config = load_config(a.config)
    dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
    model = build(config, dtype)
    model.train()
    if a.checkpointing:
        model.gradient_checkpointing_enable()
    if a.lora_rank:
        from peft import LoraConfig, get_peft_model
        lc = LoraConfig(r=a.lora_rank, lora_alpha=a.lora_alpha or 2 * a.lora_rank, lora_dropout=a.lora_dropout,
                        target_modules=lora_targets(model, a.lora_targets), task_type="CAUSAL_LM")
        model = get_peft_model(model, lc)
        if a.checkpointing:
            model.enable_input_require_grads()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-5, fused=True if a.fused_optimizer else None)
    v = config.vocab_size
    ids = torch.randint(0, v, (a.batch, a.seq), device="cuda")
    amp = a.precision == "bf16-mixed"
    torch.cuda.synchronize()
    out = {"params": sum(p.numel() for p in model.parameters()),
           "trainable": sum(p.numel() for p in trainable),
           "base": base, "after_init": torch.cuda.memory_allocated() - base,
           "attn_implementation": getattr(config, "_attn_implementation", None),
           "param_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
           "trainable_dtypes": sorted({str(p.dtype) for p in trainable})}
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    for step in range(a.steps):
        with torch.autocast("cuda", torch.bfloat16, enabled=amp):
            if a.loop == "keeps":  # `outputs = model(**batch)` held through backward, until the next forward returns
                outputs = model(input_ids=ids, labels=ids)
                loss = outputs.loss
            else:
                loss = model(input_ids=ids, labels=ids).loss
        if step == 1:
            torch.cuda.synchronize()
            out["after_forward"] = torch.cuda.memory_allocated() - base
            out["peak_forward"] = torch.cuda.max_memory_allocated() - base
        loss.backward()
        if step == 1:
            torch.cuda.synchronize()
            out["after_backward"] = torch.cuda.memory_allocated() - base
            out["peak_backward"] = torch.cuda.max_memory_allocated() - base
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step == 0:
            torch.cuda.synchronize()
            out["after_step"] = torch.cuda.memory_allocated() - base
        out["loss"] = float(loss)
        del loss
    torch.cuda.synchronize()
    out["seconds"] = round(time.time() - t0, 2)
    out["peak_with_base"] = torch.cuda.max_memory_allocated()
    out["peak"] = torch.cuda.max_memory_allocated() - base
    out["peak_reserved"] = torch.cuda.max_memory_reserved()
    outputs = None
    del model, opt, trainable, ids, outputs
    free()
    return out


# The probe: one tiny model per family, the tensors autograd saves in forward,
# by the module that was running, deduplicated by storage.
PROBE_SHAPE = {"hidden": 384, "layers": 2, "heads": 6, "kv": 2, "ffn": 1280, "vocab": 5000, "hd": 64}


def tiny(name):
    with open(os.path.join(CONFIGS, name + ".json")) as f:
        d = json.load(f)
    s = PROBE_SHAPE
    keys = {"hidden_size": s["hidden"], "n_embd": s["hidden"], "num_hidden_layers": s["layers"],
            "n_layer": s["layers"], "num_attention_heads": s["heads"], "n_head": s["heads"],
            "num_key_value_heads": s["kv"], "intermediate_size": s["ffn"], "vocab_size": s["vocab"],
            "moe_intermediate_size": 320, "num_local_experts": 4, "num_experts": 8}
    for k, v in keys.items():
        if k in d:
            d[k] = v
    if d.get("model_type") == "gpt2":
        d["n_inner"] = s["ffn"]
    if d.get("model_type") in ("gpt_neox", "phi3", "olmo2"):
        d["num_key_value_heads"] = s["heads"]
    if "head_dim" in d:
        d["head_dim"] = s["hd"]
    for k in ("pad_token_id", "bos_token_id", "eos_token_id"):
        d[k] = None if k == "pad_token_id" else 0
    return d


def probe_one(name, precision, lora=0, seq=256, overrides=None):
    from transformers import AutoConfig
    d = tiny(name)
    d.update(overrides or {})
    d = {k: v for k, v in d.items() if k not in ("architectures", "torch_dtype")}
    config = AutoConfig.for_model(**d)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    model = build(config, dtype)
    model.train()
    if lora:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=lora, lora_alpha=2 * lora, lora_dropout=0.05,
                                                 target_modules=["q_proj", "v_proj"]))
    stack = ["root"]
    for n, m in model.named_modules():
        m.register_forward_pre_hook(lambda mod, inp, n=n: stack.append(n))
        m.register_forward_hook(lambda mod, inp, out: (stack.pop(), None)[1])
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        try:
            st = t.untyped_storage()
            key = st.data_ptr()
            if key not in seen and key not in params:
                seen[key] = (stack[-1], list(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes())
        except Exception:
            pass
        return t

    B, T = 2, seq
    ids = torch.randint(0, config.vocab_size, (B, T), device="cuda")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cuda", torch.bfloat16, enabled=precision == "bf16-mixed"):
            loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    layer1, root = [], []
    for mod, shape, dt, nb in seen.values():
        entry = [mod.split("layers.1.")[-1] if "layers.1." in mod else mod, shape, dt, nb]
        if ".layers.1." in mod or mod.endswith("layers.1") or ".h.1." in mod or mod.endswith(".h.1"):
            layer1.append(entry)
        elif ".layers.0." in mod or ".h.0." in mod or mod.endswith("layers.0") or mod.endswith(".h.0"):
            continue
        else:
            root.append(entry)
    n = B * T
    return {"probe": name + (" lora" if lora else ""), "precision": precision, "tokens": n, "shape": PROBE_SHAPE,
            "seq": T, "overrides": overrides or {},
            "attn": getattr(config, "_attn_implementation", None),
            "layer_bytes_per_token": sum(e[3] for e in layer1) / n,
            "root_bytes_per_token": sum(e[3] for e in root) / n,
            "layer": layer1, "root": root}


# Both loop shapes, keeps and frees (plan-memory --keeps-logits / --frees-logits).
LOOPS = ("qwen2 bf16-mixed", "qwen3 fp32", "llama-1b bf16-mixed")


def main():
    a = parse(sys.argv[1:])
    out = open(a.out, "a") if a.out else None

    def emit(row):
        line = json.dumps(row)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    env = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "total_bytes": torch.cuda.get_device_properties(0).total_memory}
    try:
        import transformers
        env["transformers"] = transformers.__version__
    except ImportError:
        pass
    if a.probe:
        names = sorted(f[:-5] for f in os.listdir(CONFIGS) if f.endswith(".json"))
        for name in names:
            for prec in ("fp32", "bf16-mixed", "bf16"):
                try:
                    emit(probe_one(name, prec))
                except Exception as e:  # a family this transformers lacks
                    emit({"probe": name, "precision": prec, "error": repr(e)[:800]})
                free()
        for prec in ("bf16-mixed", "bf16"):
            emit(probe_one("llama-1b", prec, lora=16))
        return
    if a.probe_masks:
        for name, prec, seq, over in MASK_PROBES:
            try:
                emit(probe_one(name, prec, seq=seq, overrides=over))
            except Exception as e:
                emit({"probe": name, "precision": prec, "seq": seq, "error": repr(e)[:800]})
            free()
        return
    if a.loops:
        rows = [("%s %s" % (n, loop), c, "%s --loop %s" % (f, loop)) for n, c, f in SUITE if n in LOOPS
                for loop in ("frees", "keeps")]
    if a.suite or a.loops:
        for name, config, flags in (rows if a.loops else SUITE + VERIFY):
            if a.only and a.only not in name:
                continue
            row = {"name": name, "config": config, "flags": flags, **env}
            args = parse(flags.split() + ["--config", os.path.join(CONFIGS, config + ".json")])
            try:
                row.update(measure(args))
            except Exception as e:
                row["error"] = repr(e)[:1500]
                free()
            emit(row)
        return
    emit({**env, **measure(a)})


if __name__ == "__main__":
    main()
