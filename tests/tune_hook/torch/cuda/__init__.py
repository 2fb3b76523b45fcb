"""torch.cuda: available unless STAND_IN_CUDA=0. CUDA starts only when the
script calls init() (as a real job does with its first CUDA tensor); the
peak it reports is PEAK[0], which the script sets. max_memory_allocated()
before init() starts CUDA, the worst a torch call could do: a hook that asks
unasked then writes a peak, and the test sees it."""
import os

_initialized = False
PEAK = [0]


def is_available():
    return os.environ.get("STAND_IN_CUDA", "1") == "1"


def init():
    global _initialized
    _initialized = True


def is_initialized():
    return _initialized


def max_memory_allocated(device=None):
    init()
    return PEAK[0]
