"""A stand-in for torch's two TF32 switches, as torch 2.11 behaves on an H200
(tests/gpu/tf32_api_probe.py): the override variable turns both on; the legacy
setter sets both; the new setter sets only the new one; reading the legacy one
while they disagree raises."""
import os

from . import _C  # noqa: F401
from . import backends  # noqa: F401
import torch.backends.cuda  # noqa: F401,E402  (real torch imports it while importing torch)
