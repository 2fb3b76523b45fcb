"""What `gpuenv run --tune=+precision` does to each kind of script: the six
TF32 kinds of tf32_api_probe.py, one that runs its own autocast, a .half()
model and an evaluation under no_grad. Run under gpuenv run --tune=+precision:
each kind is a fresh Python given GPUENV_TUNE_PRECISION=bf16 again (the hook
removes it from the environment of the interpreter it tunes). One JSON line
each: was the forward under autocast, the output's and the gradients' dtypes,
and the hook's one line."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf32_api_probe import SCRIPTS  # noqa: E402

OTHERS = {
    "own-autocast": "",
    "half-model": "",
    "eval-no_grad": "",
}
BODY = """
import json, torch, torch.nn as nn, torch.nn.functional as F
model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
KIND = %r
if KIND == "half-model":
    model = model.half()
seen = []
model.register_forward_pre_hook(lambda m, a: seen.append(torch.is_autocast_enabled("cuda")))
x = torch.randn(64, 1024, device="cuda", dtype=torch.float16 if KIND == "half-model" else torch.float32)
y = torch.randint(0, 10, (64,), device="cuda")
if KIND == "own-autocast":
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(x)
elif KIND == "eval-no_grad":
    with torch.no_grad():
        out = model(x)
else:
    out = model(x)
row = {"autocast_in_forward": seen[0], "output": str(out.dtype)}
if out.requires_grad:
    F.cross_entropy(out.float(), y).backward()
    row["grad"] = str(model[0].weight.grad.dtype)
    row["weight"] = str(model[0].weight.dtype)
print(json.dumps(row))
"""


def main():
    kinds = dict(SCRIPTS, **OTHERS)
    env = dict(os.environ, GPUENV_TUNE_PRECISION="bf16")
    procs = {k: subprocess.Popen([sys.executable, "-c", "import torch\n" + user + BODY % k], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k, user in kinds.items()}
    for kind, p in procs.items():
        out, err = p.communicate()
        row = {"script": kind}
        if p.returncode == 0:
            row.update(json.loads(out.strip().splitlines()[-1]))
        else:
            row["error"] = (err.strip().splitlines() or ["?"])[-1][:200]
        row["hook"] = [line[len("gpuenv --tune=+precision: "):][:160] for line in err.splitlines()
                       if line.startswith("gpuenv --tune=+precision: ")]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
