"""A stand-in for torch, as torch 2.11 behaves on an H200: the two TF32
switches (tests/gpu/tf32_api_probe.py): the override variable turns both on;
the legacy setter sets both; the new setter sets only the new one; reading
the legacy one while they disagree raises. And, for gpuenv_precision.py,
modules, grad mode and autocast with its cast cache (_amp_core.py)."""
import os

from . import _C  # noqa: F401
from . import backends  # noqa: F401
import torch.backends.cuda  # noqa: F401,E402  (real torch imports it while importing torch)
from ._amp_core import (Tensor, bfloat16, clear_autocast_cache, float16, float32, get_default_dtype,  # noqa: F401,E402
                        int64, is_autocast_enabled, is_grad_enabled, no_grad, set_default_dtype)
from . import amp, compiler, cuda, nn  # noqa: F401,E402
from .amp import autocast  # noqa: F401,E402

_matmul_precision = ["highest"]


def set_float32_matmul_precision(p):
    _matmul_precision[0] = p


def get_float32_matmul_precision():
    return _matmul_precision[0]
