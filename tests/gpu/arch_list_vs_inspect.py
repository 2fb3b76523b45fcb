"""Compares the architectures `gpuenv inspect` finds in libtorch_cuda.so
with torch.cuda.get_arch_list(), the TORCH_CUDA_ARCH_LIST torch was built
with. Every architecture torch names must be among the cubins inspect
finds; inspect may find more (kernels built for sm_90a and the like by
libraries linked into libtorch_cuda). Exit 1 when one is missing."""
import json
import os
import subprocess
import sys

import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")
r = subprocess.run([BIN, "inspect", "--json", lib], capture_output=True, text=True)
f = json.loads(r.stdout)["files"][0]
found = set(f["cubins"]) | set(f["ptx"])
torch_list = set(torch.cuda.get_arch_list())
print("torch.cuda.get_arch_list():   ", " ".join(sorted(torch_list)))
print("gpuenv inspect finds:         ", " ".join(sorted(found)))
print("found beyond torch's list:    ", " ".join(sorted(found - torch_list)) or "none")
missing = torch_list - found
print("in torch's list, not found:   ", " ".join(sorted(missing)) or "none")
sys.exit(1 if missing else 0)
