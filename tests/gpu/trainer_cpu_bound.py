"""A Hugging Face Trainer run whose dataset does CPU work per sample (the
decode and augmentation of resnet_input_bound.py, at 96 px), with Trainer's
DataLoader settings left at their defaults (dataloader_num_workers=0). Prints
one JSON line with samples/s. Used by tests/gpu/feedback.sh."""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Trainer, TrainingArguments

from resnet_input_bound import SyntheticImages


class Samples(torch.utils.data.Dataset):
    def __init__(self, n):
        self.images = SyntheticImages(n=n, size=96, source=160)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x, y = self.images[i]
        return {"x": x, "labels": y}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 1000))

    def forward(self, x, labels=None):
        logits = self.body(x)
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=64)
    a = p.parse_args()
    start = time.perf_counter()
    args = TrainingArguments(output_dir="/tmp/gpuenv-trainer-out", max_steps=a.steps,
                             per_device_train_batch_size=a.batch, report_to="none", save_strategy="no",
                             disable_tqdm=True, logging_strategy="no")
    trainer = Trainer(model=Net(), args=args, train_dataset=Samples(a.steps * a.batch * 2))
    metrics = trainer.train().metrics
    print(json.dumps({"samples_per_s": metrics.get("train_samples_per_second"), "train_s": metrics.get("train_runtime"),
                      "script_s": time.perf_counter() - start, "num_workers": args.dataloader_num_workers,
                      "persistent_workers": args.dataloader_persistent_workers}), flush=True)


if __name__ == "__main__":
    main()
