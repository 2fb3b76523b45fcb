"""gpuenv's Python start-up hook, on PYTHONPATH only when gpuenv's plan puts it
there (docs/rules/tf32.md). It imports nothing heavy and changes nothing until
torch itself is imported; then, only where gpuenv turned TF32 on with
TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, it keeps torch's two TF32 switches in step.

Why: torch 2.9+ has two switches for fp32 matmuls, the legacy one
(allow_tf32 / set_float32_matmul_precision) and the new one
(torch.backends.cuda.matmul.fp32_precision). The override variable turns both
on. A script that then asks for IEEE fp32 through the new API alone leaves the
legacy one on, and the next read of the legacy one (torch.compile does it)
raises "you have used mix of the legacy and new APIs". Here, setting the new
switch also sets the legacy one to match, as the legacy setter already does
the other way round. Nothing else is touched: the script's choice wins.

Any sitecustomize this file shadows still runs.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _run_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` once, right after the module `name` has executed."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module
        then = self.then

        def exec_module(module):
            loader_exec(module)
            try:
                then(module)
            except Exception as e:  # never break the user's import
                print(f"gpuenv start-up hook: {fullname}: {e}", file=sys.stderr)

        spec.loader.exec_module = exec_module
        return spec


def _keep_tf32_switches_in_step(backends_cuda):
    matmul = getattr(backends_cuda, "matmul", None)
    if matmul is None:
        return
    cls = type(matmul)
    setter = cls.__setattr__
    torch_c = sys.modules["torch"]._C
    if not hasattr(torch_c, "_set_cublas_allow_tf32"):
        return

    def __setattr__(self, name, value):
        setter(self, name, value)
        if name == "fp32_precision" and value in ("ieee", "tf32"):
            torch_c._set_cublas_allow_tf32(value == "tf32")

    cls.__setattr__ = __setattr__


def _install():
    if os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1":
        sys.meta_path.insert(0, _AfterImport("torch.backends.cuda", _keep_tf32_switches_in_step))


_install()
_run_shadowed_sitecustomize()
