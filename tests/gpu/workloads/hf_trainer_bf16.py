"""A Hugging Face Trainer run as the causal-LM examples write it
(run_clm.py's shape): a GPT-2 small model from its config, a tokenized
dataset of fixed-length blocks whose labels are the inputs, TrainingArguments
with bf16=True and Trainer's own loader settings (dataloader_num_workers=0,
pin_memory on), AdamW with warm-up, no logging. Its dataset tokenizes on the
fly, as `dataset.set_transform(tokenize)` does: each sample is a document
(--doc-bytes of text) run through a byte-level tokenizer written in Python
and cut to one block, CPU work per sample in the loader. Prints one JSON
line: samples/s over the steps after the warm-up (a TrainerCallback times
them)."""
import argparse
import os
import random

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

from common import Meter


def tokenize(text, vocab):
    """Words (split at spaces) and every 4 bytes within them, hashed into the
    vocabulary: a byte-level tokenizer's per-byte Python work."""
    ids, h = [], 0
    for i, b in enumerate(text):
        h = (h * 31 + b) & 0xFFFFFF
        if b == 32 or i % 4 == 3:
            ids.append(h % vocab)
            h = 0
    return ids


class Documents(torch.utils.data.Dataset):
    def __init__(self, n, block, vocab, doc_bytes):
        self.n, self.block, self.vocab, self.doc_bytes = n, block, vocab, doc_bytes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        text = random.Random(i).randbytes(self.doc_bytes)
        ids = torch.tensor(tokenize(text, self.vocab)[:self.block])
        return {"input_ids": ids, "labels": ids.clone()}


class Timer(TrainerCallback):
    def __init__(self, meter, batch):
        self.meter, self.batch = meter, batch

    def on_step_end(self, args, state, control, **kw):
        self.meter.tick(self.batch)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--block", type=int, default=1024)
    p.add_argument("--doc-bytes", type=int, default=65536)
    a = p.parse_args()
    config = GPT2Config(n_positions=a.block)
    model = GPT2LMHeadModel(config)
    args = TrainingArguments(output_dir=os.environ.get("TMPDIR", "/tmp") + "/gpuenv-hf-trainer", max_steps=a.steps,
                             per_device_train_batch_size=a.batch, bf16=True, learning_rate=5e-4,
                             warmup_steps=10, report_to="none", save_strategy="no", disable_tqdm=True,
                             logging_strategy="no")
    meter = Meter(a.warmup)
    trainer = Trainer(model=model, args=args, train_dataset=Documents(a.steps * a.batch, a.block, config.vocab_size, a.doc_bytes),
                      callbacks=[Timer(meter, a.batch)])
    trainer.train()
    meter.report("hf-trainer-bf16", "samples/s", workers=args.dataloader_num_workers,
                 pin_memory=args.dataloader_pin_memory)


if __name__ == "__main__":
    main()
