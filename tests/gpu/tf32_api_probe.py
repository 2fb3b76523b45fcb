"""Which way of making TF32 the default keeps every kind of script working?

For each way gpuenv could turn TF32 on (none, TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1,
a start-up hook through either API) and each kind of script (default, legacy
"highest", legacy allow_tf32=False, new "ieee", new "tf32", legacy "high"), runs
a 4096^2 fp32 matmul in a fresh process and prints whether it ran, its relative
error against fp64 (TF32 ~1e-4, IEEE fp32 ~1e-6) and its TFLOP/s. One JSON line each.
"""
import json
import os
import subprocess
import sys

WAYS = {
    "none": ({}, ""),
    "override-env": ({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"}, ""),
    "hook-legacy-high": ({}, "torch.set_float32_matmul_precision('high')\n"),
    "hook-new-tf32": ({}, "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"),
}
SCRIPTS = {
    "default": "",
    "legacy-highest": "torch.set_float32_matmul_precision('highest')\n",
    "legacy-allow_tf32-false": "torch.backends.cuda.matmul.allow_tf32 = False\n",
    "legacy-high": "torch.set_float32_matmul_precision('high')\n",
    "new-ieee": "torch.backends.cuda.matmul.fp32_precision = 'ieee'\n",
    "new-tf32": "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n",
}
BODY = """
import json, time
a = torch.randn(4096, 4096, device='cuda'); b = torch.randn(4096, 4096, device='cuda')
ref = (a.double() @ b.double())
c = a @ b
err = ((c.double() - ref).norm() / ref.norm()).item()
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(50): c = a @ b
torch.cuda.synchronize(); dt = (time.perf_counter() - t) / 50
state = {}
for name, get in (("allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
                  ("fp32_precision", lambda: torch.backends.cuda.matmul.fp32_precision),
                  ("float32_matmul_precision", torch.get_float32_matmul_precision)):
    try: state[name] = get()
    except Exception as e: state[name] = "error: " + str(e)[:80]
print(json.dumps({"rel_err": err, "tflops": 2 * 4096**3 / dt / 1e12, **state}))
"""


# Under `gpuenv run` (--inherit): what each script must get, and no read of
# either switch may raise.
EXPECTED_TF32 = {"default": True, "legacy-highest": False, "legacy-allow_tf32-false": False,
                 "legacy-high": True, "new-ieee": False, "new-tf32": True}


def main():
    if "--inherit" in sys.argv:
        return inherit()
    for way, (env, hook) in WAYS.items():
        for kind, user in SCRIPTS.items():
            code = "import torch\n" + hook + user + BODY
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env={**os.environ, **env})
            row = {"way": way, "script": kind, "torch": None}
            if r.returncode == 0:
                row.update(json.loads(r.stdout.strip().splitlines()[-1]))
                row["tf32"] = row["rel_err"] > 1e-5
            else:
                row["error"] = r.stderr.strip().splitlines()[-1][:300]
            print(json.dumps(row), flush=True)


def inherit():
    failures = 0
    for kind, user in SCRIPTS.items():
        r = subprocess.run([sys.executable, "-c", "import torch\n" + user + BODY], capture_output=True, text=True)
        row = {"way": "inherit", "script": kind}
        if r.returncode == 0:
            row.update(json.loads(r.stdout.strip().splitlines()[-1]))
            row["tf32"] = row["rel_err"] > 1e-5
            raised = [k for k in ("allow_tf32", "fp32_precision", "float32_matmul_precision")
                      if str(row[k]).startswith("error")]
            ok = row["tf32"] == EXPECTED_TF32[kind] and not raised
        else:
            row["error"] = r.stderr.strip().splitlines()[-1][:300]
            ok = False
        row["pass"] = ok
        failures += not ok
        print(json.dumps(row), flush=True)
    print("PASS" if failures == 0 else f"FAIL: {failures} script kinds", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
