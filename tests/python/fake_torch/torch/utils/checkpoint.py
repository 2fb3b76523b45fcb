"""Recomputes a function under the autocast state of its forward, as torch.utils.checkpoint does."""
import torch


def recompute(fn, *args):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=torch.is_autocast_enabled("cuda")):
        return fn(*args)
