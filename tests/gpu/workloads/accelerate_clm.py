"""A causal-LM loop in the style of transformers' run_clm_no_trainer.py: an
Accelerator, AutoModelForCausalLM from a config (GPT-2 small), a DataLoader
with shuffle, default_data_collator and the per-device batch of 8, AdamW over
parameter groups (no weight decay on biases and norms), a linear schedule with
warm-up, and the loop as written there:
    outputs = model(**batch); loss = outputs.loss; accelerator.backward(loss)
fp32 (Accelerate's default mixed_precision "no"). The outputs stay alive
through backward. Prints one JSON line: tokens/s after the warm-up."""
import argparse

import torch
from accelerate import Accelerator
from transformers import AutoConfig, AutoModelForCausalLM, default_data_collator, get_scheduler

from common import Meter


class Blocks(torch.utils.data.Dataset):
    def __init__(self, n, block, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, block), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.ids[i]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--per_device_train_batch_size", type=int, default=8)
    p.add_argument("--block_size", type=int, default=1024)
    a = p.parse_args()
    accelerator = Accelerator()
    config = AutoConfig.for_model("gpt2", n_positions=a.block_size)
    model = AutoModelForCausalLM.from_config(config)
    train_dataset = Blocks(a.steps * a.per_device_train_batch_size, a.block_size, config.vocab_size)
    train_dataloader = torch.utils.data.DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator,
                                                   batch_size=a.per_device_train_batch_size)
    no_decay = ["bias", "layer_norm.weight", "ln_"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.0},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=5e-5)
    lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=5, num_training_steps=a.steps)
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler)
    model.train()
    meter = Meter(a.warmup)
    for step, batch in enumerate(train_dataloader):
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        meter.tick(batch["input_ids"].numel())
    meter.report("accelerate-clm", "tokens/s", mixed_precision=accelerator.mixed_precision)


if __name__ == "__main__":
    main()
