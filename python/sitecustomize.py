"""gpuenv run --tune's start-up hook (docs/feedback.md).

gpuenv puts this directory first on PYTHONPATH only under `gpuenv run --tune`,
with GPUENV_TUNE_DATALOADER="num_workers=15,pin_memory=True,..." holding what
the last verdict of the command asked for. When the script imports
torch.utils.data, DataLoader.__init__ is wrapped so that each loader gets those
settings for the arguments the script did not pass itself; arguments the
script passed are never touched, nor is anything that changes numerics. One
line per loader (per call site) says what changed. Any other sitecustomize on
the path still runs, after this one.
"""
import os
import sys

_VAR = "GPUENV_TUNE_DATALOADER"
_SETTINGS = ("num_workers", "pin_memory", "persistent_workers")


def _log(message):
    sys.stderr.write("gpuenv --tune: " + message + "\n")
    sys.stderr.flush()


def _wanted(text):
    """"num_workers=15,pin_memory=True" -> {"num_workers": 15, "pin_memory": True}."""
    out = {}
    for part in text.split(","):
        name, _, value = part.strip().partition("=")
        if name not in _SETTINGS or not value:
            continue
        if name == "num_workers":
            try:
                out[name] = max(0, int(value))
            except ValueError:
                continue
        else:
            out[name] = value.strip().lower() in ("1", "true", "yes")
    return out


def _cuda_available():
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def _cuda_tensors(dataset):
    """True for a TensorDataset of CUDA tensors: forked workers cannot use them."""
    for t in getattr(dataset, "tensors", ()) or ():
        if getattr(t, "is_cuda", False):
            return True
    return False


def _changes(sig, data_module, wanted, args, kwargs):
    """The keyword arguments to add to one DataLoader(...) call, and why not when none."""
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError:
        return {}, None  # the call is wrong as written: let DataLoader say so
    explicit = set(bound.arguments)
    dataset = bound.arguments.get("dataset")
    iterable = getattr(data_module, "IterableDataset", None)
    if iterable is not None and isinstance(dataset, iterable):
        return {}, "an IterableDataset (each worker would yield all of it)"
    if _cuda_tensors(dataset):
        return {}, "a dataset of CUDA tensors (forked workers cannot use them)"
    changes = {}
    if "num_workers" in wanted and "num_workers" not in explicit:
        changes["num_workers"] = wanted["num_workers"]
    workers = changes.get("num_workers", bound.arguments.get("num_workers", 0)) or 0
    if wanted.get("pin_memory") and "pin_memory" not in explicit and _cuda_available():
        changes["pin_memory"] = True
    if wanted.get("persistent_workers") and "persistent_workers" not in explicit and workers > 0:
        changes["persistent_workers"] = True
    if changes.get("num_workers", 0) > 0 and "multiprocessing_context" not in explicit:
        # A script without `if __name__ == "__main__":` runs its training
        # again in spawned workers: keep fork, Linux's default before 3.14,
        # unless the script chose a start method itself.
        import multiprocessing
        if (multiprocessing.get_start_method(allow_none=True) is None and sys.platform.startswith("linux")
                and multiprocessing.get_context().get_start_method() != "fork"):
            changes["multiprocessing_context"] = "fork"
    return changes, None


def _patch(data_module, wanted):
    loader = getattr(data_module, "DataLoader", None)
    if loader is None or getattr(loader, "_gpuenv_tuned", False):
        return
    import functools
    import inspect
    original = loader.__init__
    try:
        sig = inspect.signature(original)
    except (TypeError, ValueError):
        return
    told = set()

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        caller = sys._getframe(1)
        where = "%s:%d" % (os.path.basename(caller.f_code.co_filename), caller.f_lineno)
        try:
            changes, skipped = _changes(sig, data_module, wanted, (self,) + args, kwargs)
        except Exception as e:  # never break the script's loader
            changes, skipped = {}, "an error in the hook (%r)" % (e,)
        if where not in told and (changes or skipped):
            told.add(where)
            if changes:
                _log("DataLoader at %s: %s (yours kept: the arguments you passed)"
                     % (where, ", ".join("%s=%r" % kv for kv in changes.items())))
            else:
                _log("DataLoader at %s left as it is: %s" % (where, skipped))
        kwargs.update(changes)
        original(self, *args, **kwargs)

    loader.__init__ = __init__
    loader._gpuenv_tuned = True


class _Loader:
    """Runs the real loader of torch.utils.data, then patches the module."""

    def __init__(self, real, wanted):
        self._real, self._wanted = real, wanted

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        self._real.exec_module(module)
        _patch(module, self._wanted)

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Finder:
    """Waits for `import torch.utils.data`; imports nothing itself."""

    def __init__(self, wanted):
        self._wanted = wanted

    def find_spec(self, name, path=None, target=None):
        if name != "torch.utils.data":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, self._wanted)
                return spec
        return None


def _chain():
    """Runs the next sitecustomize on sys.path, as if this one were not there."""
    import importlib
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            _log("the next sitecustomize failed: %r" % (e,))
    except Exception as e:  # what site.py does with a failing sitecustomize
        _log("the next sitecustomize failed: %r" % (e,))
    finally:
        sys.path[:] = saved
        if ours is not None:
            sys.modules["sitecustomize"] = ours


def _install():
    wanted = _wanted(os.environ.get(_VAR, ""))
    if wanted and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(wanted))


_install()
_chain()
