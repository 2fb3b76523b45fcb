"""python/gpuenv_precision.py (`gpuenv run --tune=+precision`) against the
stand-in torch (tests/python/fake_torch, whose autocast caches bf16 copies of
weights as torch's does): which calls run under autocast, that no forward
pass sees weights from before an optimizer step (and that a region spanning
steps would), and which scripts are left alone."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
FAKE = os.path.join(HERE, "fake_torch")


def run(code, precision="bf16", cc="9.0"):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "GPUENV_TUNE_DATALOADER",
                        "GPUENV_TUNE_PRECISION")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join([HOOK, FAKE]), FAKE_TORCH_CC=cc)
    if precision is not None:
        env["GPUENV_TUNE_PRECISION"] = precision
    return subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, env=env)


PRELUDE = """
import torch, torch.nn as nn, torch.nn.functional as F
from torch import _amp_core as core
class Probe(nn.Module):
    seen = []
    def forward(self, x):
        Probe.seen.append((torch.is_autocast_enabled("cuda"), core._ac["nesting"]))
        return x
class Net(nn.Module):
    def __init__(self, w):
        self.lin = nn.Linear(w)
        self.probe = Probe()
    def forward(self, x):
        return self.probe(self.lin(self.probe(x)))
x = torch.Tensor(2.0)
"""

# Fit w * 2 = 3 by gradient descent on the weight value the forward used
# (out.value / x.value): with fresh casts it converges to 1.5; with casts
# cached from step 0 the step never changes what the forward sees, and w runs off.
TRAIN = """
net = Net(0.0)
for step in range(200):
    out = net(x)
    used = out.value / x.value
    net.lin.weight.value -= 0.05 * 2 * (used * 2 - 3) * 2
print(round(net.lin.weight.value, 4), out.dtype, Probe.seen[-1])
"""

# The variant a hook must not be: one autocast region entered before
# training and never left (the cache is then never cleared).
STALE = "import gpuenv_precision\nh = gpuenv_precision._state['hook']\nh.exit = lambda *a: None\n" \
        "torch.clear_autocast_cache = lambda: None\n"


class Precision(unittest.TestCase):
    def test_training_sees_fresh_weights(self):
        r = run(TRAIN)
        self.assertEqual(r.stdout.split()[0], "1.5", r.stderr)
        self.assertIn("torch.float32", r.stdout)           # the output came back as float32
        self.assertIn("(True, 1)", r.stdout)               # one region: nested calls open none
        self.assertIn("bf16 autocast around each outermost module call", r.stderr)

    def test_a_region_spanning_steps_diverges(self):
        r = run(STALE + TRAIN)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(abs(float(r.stdout.split()[0]) - 1.5), 10, r.stdout)

    def test_plain_run_patches_nothing(self):
        r = run("print(nn.Module.__call__.__module__, 'gpuenv_precision' in __import__('sys').modules)",
                precision=None)
        self.assertEqual(r.stdout.strip(), "torch.nn False", r.stderr)

    def test_the_variable_is_for_the_jobs_interpreter_only(self):
        r = run("import os\nprint(os.environ.get('GPUENV_TUNE_PRECISION'))")
        self.assertEqual(r.stdout.strip(), "None", r.stderr)

    def test_no_grad_stays_fp32(self):
        r = run("with torch.no_grad():\n    out = Net(1.0)(x)\nprint(out.dtype, Probe.seen)")
        self.assertEqual(r.stdout.strip(), "torch.float32 [(False, 0), (False, 0)]", r.stderr)

    def test_grad_accumulation_and_two_models(self):
        code = ("a, b = Net(1.0), Net(2.0)\nfor _ in range(3):\n    a(x); b(a(x))\n"
                "print(set(Probe.seen), core._ac['nesting'], len(core._ac['cache']))")
        r = run(code)
        self.assertEqual(r.stdout.strip(), "{(True, 1)} 0 0", r.stderr)

    def test_loss_module_runs_under_autocast_and_bce_still_works(self):
        code = ("out = Net(1.0)(x)\nl = nn.MSELoss()(out, torch.Tensor(1.0))\n"
                "inner = nn.Module()\ninner.forward = lambda a, b: nn.BCELoss()(a, b)\n"
                "class WithBce(nn.Module):\n    def forward(self, a, b): return nn.BCELoss()(a, b)\n"
                "print(l.dtype, WithBce()(out, torch.Tensor(1.0)).dtype)")
        r = run(code)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "torch.float32 torch.float32"), r.stderr)

    def test_checkpoint_recompute_is_not_the_scripts_autocast(self):
        code = ("import torch.utils.checkpoint as ck\nclass C(nn.Module):\n"
                "    def forward(self, x): return ck.recompute(lambda y: y, x)\n"
                "C()(x)\nNet(1.0)(x)\nprint(Probe.seen[-1])")
        r = run(code)
        self.assertEqual(r.stdout.strip(), "(True, 1)", r.stderr)
        self.assertNotIn("left alone", r.stderr)

    def left_alone(self, code, why):
        r = run(code + "\nProbe.seen.clear()\nout = Net(1.0)(x)\nprint(out.dtype, Probe.seen)")
        self.assertEqual(r.stdout.strip(), "torch.float32 [(False, 0), (False, 0)]", r.stderr)
        self.assertEqual(r.stderr.count("left alone"), 1, r.stderr)
        self.assertIn(why, r.stderr)
        return r

    def test_own_autocast_is_left_alone(self):
        r = self.left_alone("with torch.autocast('cuda', dtype=torch.bfloat16):\n    pass", "enters autocast itself")
        self.assertIn("(<string>:", r.stderr)

    def test_own_autocast_through_torch_cuda_amp(self):
        self.left_alone("import torch.cuda.amp\nwith torch.cuda.amp.autocast(enabled=False):\n    pass",
                        "enters autocast itself")

    def test_grad_scaler_is_left_alone(self):
        self.left_alone("s = torch.amp.GradScaler()", "GradScaler")

    def test_half_model_is_left_alone(self):
        r = run("out = Net(1.0).half()(x)\nprint(Probe.seen)")
        self.assertEqual(r.stdout.strip(), "[(False, 0), (False, 0)]", r.stderr)
        self.assertIn("parameters are torch.float16", r.stderr)

    def test_ieee_requests_are_left_alone(self):
        self.left_alone("torch.set_float32_matmul_precision('highest')", "IEEE fp32 matmuls")
        self.left_alone("torch.backends.cudnn.allow_tf32 = False", "allow_tf32 = False")
        self.left_alone("torch.backends.cuda.matmul.fp32_precision = 'ieee'", "fp32_precision = 'ieee'")
        self.left_alone("torch.set_default_dtype(torch.float16)", "default dtype")

    def test_tf32_requests_keep_it(self):
        r = run("torch.set_float32_matmul_precision('high')\ntorch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
                "Net(1.0)(x)\nprint(Probe.seen)")
        self.assertEqual(r.stdout.strip(), "[(True, 1), (True, 1)]", r.stderr)

    def test_gpu_without_bf16_is_left_alone(self):
        r = run("Net(1.0)(x)\nprint(Probe.seen)", cc="7.0")
        self.assertEqual(r.stdout.strip(), "[(False, 0), (False, 0)]", r.stderr)
        self.assertIn("no bf16", r.stderr)

    def test_unknown_precision_patches_nothing(self):
        r = run("print(nn.Module.__call__.__module__)", precision="fp16")
        self.assertEqual(r.stdout.strip(), "torch.nn", r.stderr)
        self.assertIn("unknown precision 'fp16'", r.stderr)


if __name__ == "__main__":
    unittest.main()
