"""Compares the architectures `gpuenv inspect` finds in libtorch_cuda.so
with what torch itself reports (torch.cuda.get_arch_list()). Exit 1 when
they differ."""
import json
import os
import subprocess
import sys

import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/gpuenv"
lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")
r = subprocess.run([BIN, "inspect", "--json", lib], capture_output=True, text=True)
f = json.loads(r.stdout)["files"][0]
found = sorted(set(f["cubins"]) | set(f["ptx"]))
torch_list = sorted(torch.cuda.get_arch_list())
print("gpuenv inspect:             ", " ".join(found))
print("torch.cuda.get_arch_list(): ", " ".join(torch_list))
same = found == torch_list
print("same" if same else "DIFFERENT")
sys.exit(0 if same else 1)
