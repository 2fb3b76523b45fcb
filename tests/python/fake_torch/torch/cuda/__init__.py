"""torch.cuda: available, with the compute capability FAKE_TORCH_CC says (default 9.0)."""
import os

from . import amp  # noqa: F401


def is_available():
    return os.environ.get("FAKE_TORCH_CC", "9.0") != "none"


def get_device_capability(device=None):
    major, minor = os.environ.get("FAKE_TORCH_CC", "9.0").split(".")
    return int(major), int(minor)
