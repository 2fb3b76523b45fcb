"""python/sitecustomize.py against a stand-in torch (tests/python/fake_torch):
the TF32 switches stay in step, nothing happens without the override, torch is
never imported by the hook, and a shadowed sitecustomize still runs."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
FAKE = os.path.join(HERE, "fake_torch")


def python(code, hook=True, override=True, extra_path=()):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(([HOOK] if hook else []) + list(extra_path) + [FAKE])
    if override:
        env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "1"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


NEW_IEEE = "import torch\ntorch.backends.cuda.matmul.fp32_precision = 'ieee'\nprint(torch.backends.cuda.matmul.allow_tf32)"


class StartupHook(unittest.TestCase):
    def test_stand_in_fails_without_the_hook(self):
        r = python(NEW_IEEE, hook=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("mix of the legacy and new APIs", r.stderr)

    def test_new_api_ieee_turns_the_legacy_switch_off(self):
        r = python(NEW_IEEE)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "False"), r.stderr)

    def test_new_api_tf32_keeps_both_on(self):
        r = python(NEW_IEEE.replace("'ieee'", "'tf32'"))
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "True"), r.stderr)

    def test_default_script_keeps_tf32(self):
        r = python("import torch\nprint(torch.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.fp32_precision)")
        self.assertEqual(r.stdout.strip(), "True tf32", r.stderr)

    def test_legacy_api_unchanged(self):
        r = python("import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"
                   "print(torch.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.fp32_precision)")
        self.assertEqual(r.stdout.strip(), "False ieee", r.stderr)

    def test_nothing_patched_without_the_override(self):
        r = python("import torch\nprint(type(torch.backends.cuda.matmul).__setattr__.__module__)", override=False)
        self.assertEqual(r.stdout.strip(), "torch.backends.cuda", r.stderr)

    def test_hook_imports_no_torch(self):
        r = python("import sys\nprint('torch' in sys.modules)")
        self.assertEqual(r.stdout.strip(), "False", r.stderr)

    def test_shadowed_sitecustomize_still_runs(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import builtins\nbuiltins.GPUENV_TEST_CHAINED = True\n")
            r = python("import builtins\nprint(getattr(builtins, 'GPUENV_TEST_CHAINED', False))", extra_path=[d])
        self.assertEqual(r.stdout.strip(), "True", r.stderr)


if __name__ == "__main__":
    unittest.main()
