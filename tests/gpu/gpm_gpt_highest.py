"""tests/gpu/gpt_train.py with torch.set_float32_matmul_precision("highest"):
the fp32 GPT-2 loop whose matrix math stays on the CUDA cores (what
gpuenv run's fp32-on-cuda-cores verdict is for). Arguments go to gpt_train."""
import os
import runpy
import sys

import torch

torch.set_float32_matmul_precision("highest")
sys.argv[0] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt_train.py")
runpy.run_path(sys.argv[0], run_name="__main__")
