"""python/gpuenv_precision.py (`gpuenv run --tune=+precision`) against the
stand-in torch (tests/python/fake_torch, whose autocast caches bf16 copies of
weights as torch's does): which calls run under autocast, that no forward
pass sees weights from before an optimizer step (and that a region spanning
steps would), and which scripts are left alone."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
FAKE = os.path.join(HERE, "fake_torch")


def run(code, precision="bf16", cc="9.0", ranks=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "GPUENV_TUNE_DATALOADER",
                        "GPUENV_TUNE_PRECISION", "RANK", "LOCAL_RANK", "SLURM_PROCID")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join([HOOK, FAKE]), FAKE_TORCH_CC=cc)
    env.update(ranks or {})
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


# Models whose outputs are the structures forward passes return: each leaf a
# tensor autocast made bf16 (the Linear's output), or something to leave as it is.
OUTPUTS = """
import collections, dataclasses, json

class ModelOutput(collections.OrderedDict):
    # transformers' ModelOutput: a dataclass and an OrderedDict whose items mirror its
    # attributes, with __setitem__ allowed and update/__delitem__ refused.
    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None:
                collections.OrderedDict.__setitem__(self, f.name, v)
    def __setitem__(self, k, v):
        collections.OrderedDict.__setitem__(self, k, v)
        object.__setattr__(self, k, v)
    def update(self, *a, **k):
        raise Exception("You cannot use ``update`` on a ModelOutput instance.")
    def __delitem__(self, k):
        raise Exception("You cannot use ``__delitem__`` on a ModelOutput instance.")

@dataclasses.dataclass
class CausalLMOutput(ModelOutput):
    loss: object = None
    logits: object = None
    hidden_states: object = None

@dataclasses.dataclass(frozen=True)
class Frozen:
    logits: object
    aux: list

Pair = collections.namedtuple("Pair", "logits extra")

def dtypes(o):
    # The structure with each tensor replaced by its dtype, the containers' types named.
    if isinstance(o, torch.Tensor):
        return repr(o.dtype)
    if isinstance(o, dict):
        return [type(o).__name__, {k: dtypes(v) for k, v in o.items()}]
    if dataclasses.is_dataclass(o):
        return [type(o).__name__, {f.name: dtypes(getattr(o, f.name)) for f in dataclasses.fields(o)}]
    if isinstance(o, (tuple, list)):
        return [type(o).__name__, [dtypes(v) for v in o]]
    return o

class Shaped(nn.Module):
    def __init__(self, make):
        self.lin, self.make = nn.Linear(1.0), make
    def forward(self, x):
        h = self.lin(x)
        return self.make(h, torch.Tensor(7, torch.int64))

makers = {
    "dict": lambda h, i: {"logits": h, "ids": i, "name": "x"},
    "namedtuple": lambda h, i: Pair(h, (h, [h, i])),
    "nested": lambda h, i: (h, [h, (h, {"deep": [h]})], None, 3),
    "ordered": lambda h, i: collections.OrderedDict(logits=h),
    "modeloutput": lambda h, i: CausalLMOutput(loss=h, logits=h, hidden_states=(h, h)),
    "dataclass": lambda h, i: Frozen(h, [h, i]),
}
got = {}
for name, make in makers.items():
    out = Shaped(make)(x)
    got[name] = dtypes(out)
    if name == "modeloutput":  # its attributes follow its items
        got["modeloutput.attrs"] = [repr(out.logits.dtype), [repr(t.dtype) for t in out.hidden_states]]
print(json.dumps(got))
"""

F32, I64 = "torch.float32", "torch.int64"


class Precision(unittest.TestCase):
    def test_outputs_come_back_float32_in_their_own_structures(self):
        r = run(OUTPUTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["dict"], ["dict", {"logits": F32, "ids": I64, "name": "x"}])
        self.assertEqual(got["namedtuple"], ["Pair", [F32, ["tuple", [F32, ["list", [F32, I64]]]]]])
        self.assertEqual(got["nested"], ["tuple", [F32, ["list", [F32, ["tuple", [F32, ["dict", {"deep": [
            "list", [F32]]}]]]]], None, 3]])
        self.assertEqual(got["ordered"], ["OrderedDict", {"logits": F32}])
        self.assertEqual(got["modeloutput"], ["CausalLMOutput", {"loss": F32, "logits": F32,
                                                                 "hidden_states": ["tuple", [F32, F32]]}])
        self.assertEqual(got["modeloutput.attrs"], [F32, [F32, F32]])
        self.assertEqual(got["dataclass"], ["Frozen", {"logits": F32, "aux": ["list", [F32, I64]]}])

    def test_without_the_upcast_the_outputs_are_bf16(self):
        # What the test above would see if the hook handed autocast's outputs back as they are.
        r = run("import gpuenv_precision\ngpuenv_precision._state['hook'].to_fp32 = lambda o: o\n" + OUTPUTS)
        got = json.loads(r.stdout)
        self.assertEqual(got["modeloutput.attrs"], ["torch.bfloat16", ["torch.bfloat16", "torch.bfloat16"]],
                         r.stderr)

    def test_torch_compile_tracing_reads_nothing_of_the_hook(self):
        # Under torch.compile, Dynamo traces Module.__call__ for each module it inlines: the hook's
        # first test must be is_compiling(), before its thread-local and its state.
        code = ("import gpuenv_precision as g\nclass Untraceable:\n"
                "    def __getattr__(self, n): raise AssertionError('read while compiling: ' + n)\n"
                "    def __getitem__(self, k): raise AssertionError('read while compiling: ' + k)\n"
                "saved = g._local, g._state\ng._local, g._state = Untraceable(), Untraceable()\n"
                "torch.compiler._compiling[0] = True\nout = Net(1.0)(x)\n"
                "g._local, g._state = saved\nprint(out.dtype, Probe.seen)")
        r = run(code)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "torch.float32 [(False, 0), (False, 0)]"), r.stderr)

    def test_ranks_other_than_0_say_nothing(self):
        for ranks, lines in (({"RANK": "0"}, 1), ({"RANK": "1", "LOCAL_RANK": "1"}, 0), ({}, 1)):
            r = run("Net(1.0)(x)\nprint(Probe.seen[-1])", ranks=ranks)
            self.assertEqual(r.stdout.strip(), "(True, 1)", r.stderr)  # every rank runs under autocast
            self.assertEqual(r.stderr.count("gpuenv --tune=+precision:"), lines, (ranks, r.stderr))

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

    def test_accelerates_mixed_precision_is_left_alone_from_the_first_step(self):
        # accelerate's prepare() keeps the forward it wraps in autocast as _original_forward
        # (Trainer with bf16=True): no forward pass runs under the hook's autocast first.
        r = run("n = Net(1.0)\nn._original_forward = n.forward\nout = n(x)\nprint(out.dtype, Probe.seen)")
        self.assertEqual(r.stdout.strip(), "torch.float32 [(False, 0), (False, 0)]", r.stderr)
        self.assertEqual(r.stderr.count("left alone"), 1, r.stderr)
        self.assertIn("as accelerate's mixed precision does", r.stderr)
        self.assertNotIn("forward passes before it", r.stderr)
        self.assertNotIn("bf16 autocast around", r.stderr)

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
