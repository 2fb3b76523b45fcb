"""gpuenv's Python start-up hook. gpuenv puts this directory first on
PYTHONPATH; the hook imports nothing heavy and changes nothing until torch's
own modules are imported, and then only what the environment asks for:

- TF32 (docs/rules/tf32.md), where gpuenv turned TF32 on with
  TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1: torch 2.9+ has two switches for fp32
  matmuls, the legacy one (allow_tf32 / set_float32_matmul_precision) and the
  new one (torch.backends.cuda.matmul.fp32_precision). The override turns both
  on. A script that then asks for IEEE fp32 through the new API alone leaves
  the legacy one on, and the next read of the legacy one (torch.compile does
  it) raises "you have used mix of the legacy and new APIs". Here, setting the
  new switch also sets the legacy one to match, as the legacy setter already
  does the other way round. The script's choice wins.

- `gpuenv run --tune` (docs/feedback.md), with GPUENV_TUNE_DATALOADER=
  "num_workers=15,pin_memory=True,..." holding what the last verdict of the
  command asked for: when the script imports torch.utils.data,
  DataLoader.__init__ is wrapped so that each loader gets those settings for
  the arguments the script did not pass itself; arguments the script passed
  are never touched, nor is anything that changes numerics. One line per
  loader (per call site) says what changed, from rank 0 only under torchrun
  or Slurm (RANK, else SLURM_PROCID, else LOCAL_RANK: the ranks apply the
  same settings, so one says it for the job). The variable is removed once
  read, so Pythons the job starts itself are not tuned. Hugging Face's
  TrainingArguments get the same settings for the fields the script did not
  set (gpuenv_trainer.py): Trainer passes its loader arguments explicitly.

- `gpuenv run`'s record of the job's own speed (gpuenv_speed.py), with
  GPUENV_SPEED_FILE naming the file gpuenv reads when the job ends:
  optimizer steps and DataLoader batches are counted and timed (torch's
  global optimizer step hook, the loader iterator's __next__). The variable
  is removed once read.

- `gpuenv run --tune=+precision` (docs/precision.md), with
  GPUENV_TUNE_PRECISION=bf16 (removed once read, as above): when the script
  imports torch, gpuenv_precision.py beside this file runs each outermost
  forward pass (torch.nn.Module.__call__, losses that are modules too)
  under bf16 autocast, for fp32 scripts that ask for no precision of their
  own; its docstring lists what it patches and why. Its lines too come from
  rank 0 only.

Any other sitecustomize on the path still runs, after this one, and is then
the module `sitecustomize`, as without gpuenv.

A Python started with -I, -E or -S never runs this file (PYTHONPATH or site
is off): `gpuenv run` then sets none of the variables above and says so
(src/decide/run/python_flags.h), since one this file never removed would be
taken by the next Python the job starts.
"""
import os
import sys

_TUNE_VAR = "GPUENV_TUNE_DATALOADER"
_SETTINGS = ("num_workers", "pin_memory", "persistent_workers")


def _log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _rank():
    """This process's rank as its launcher set it (torchrun: RANK and
    LOCAL_RANK; srun: SLURM_PROCID), the first that is a number; None
    for a single process."""
    for name in ("RANK", "SLURM_PROCID", "LOCAL_RANK"):
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            continue
    return None


def _speaks_for_job():
    """True where this process says what --tune did: a single process, or rank 0."""
    return _rank() in (None, 0)


def _tune_log(message):
    """--tune's lines (what a loader or TrainingArguments got): rank 0's only."""
    if _SPEAKS:
        _log(message)


# ---- TF32: keep torch's two switches in step ----

def _keep_tf32_switches_in_step(backends_cuda):
    matmul = getattr(backends_cuda, "matmul", None)
    torch_c = getattr(sys.modules.get("torch"), "_C", None)
    if matmul is None or not hasattr(torch_c, "_set_cublas_allow_tf32"):
        return
    cls = type(matmul)
    setter = cls.__setattr__

    def __setattr__(self, name, value):
        setter(self, name, value)
        if name == "fp32_precision" and value in ("ieee", "tf32"):
            torch_c._set_cublas_allow_tf32(value == "tf32")

    cls.__setattr__ = __setattr__


# ---- --tune: DataLoader defaults from the last verdict ----

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


class _Report:
    """What --tune really did, per setting, for gpuenv's record (issue 40): the
    speed file's words (gpuenv_speed.py) `tuned=` (the settings some loader or
    TrainingArguments got from gpuenv) and `yours=` (those the script passed
    itself, with its values, and gpuenv applied nowhere): gpuenv records only
    what was applied, and its tuner leaves the script's settings alone."""

    def __init__(self):
        self.applied, self.yours, self.passed_on = {}, {}, set()

    def note(self, changes, yours, passed_on=()):
        """`passed_on`: settings a library passes to its loaders explicitly
        from defaults the script did not set (Trainer's dataloader_* fields):
        not the script's, whatever the DataLoader call looks like."""
        self.applied.update(changes)
        self.passed_on.update(passed_on)
        for name, value in yours.items():
            self.yours.setdefault(name, value)

    @staticmethod
    def _text(name, value):
        if name != "num_workers":
            return str(bool(value))
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1024:
            return str(value)
        return None  # not a count gpuenv can record

    def words(self):
        def listed(values, skip=()):
            parts = ((n, self._text(n, values[n])) for n in _SETTINGS if n in values and n not in skip)
            return ",".join("%s=%s" % (n, t) for n, t in parts if t is not None)
        yours = listed(self.yours, skip=set(self.applied) | self.passed_on)
        return "tuned=" + listed(self.applied) + (" yours=" + yours if yours else "")

    def yours_words(self):
        """Without --tune: only what the script passed itself, so that the first
        verdict's fix already knows --tune cannot change it (issue 40)."""
        yours = self.words().partition(" yours=")[2]
        return "yours=" + yours if yours else ""


_REPORT = _Report()


def _changes(sig, data_module, wanted, args, kwargs):
    """The keyword arguments to add to one DataLoader(...) call, and why not when none."""
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError:
        return {}, None  # the call is wrong as written: let DataLoader say so
    explicit = set(bound.arguments)
    _REPORT.note({}, {name: bound.arguments[name] for name in _SETTINGS if name in explicit})
    if not wanted:
        return {}, None  # watched, not tuned: only what the script passed is noted
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
        # get_all_start_methods()[0] is the default without choosing it:
        # get_context() would fix it, and the script's own
        # set_start_method() would then fail ("context has already been set").
        import multiprocessing
        if (multiprocessing.get_start_method(allow_none=True) is None and sys.platform.startswith("linux")
                and multiprocessing.get_all_start_methods()[0] != "fork"):
            changes["multiprocessing_context"] = "fork"
    return changes, None


def _patch_dataloader(data_module, wanted):
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
        if wanted and where not in told and (changes or skipped):  # watched only: silent
            told.add(where)
            if changes:
                _tune_log("gpuenv --tune: DataLoader at %s: %s (yours kept: the arguments you passed)"
                          % (where, ", ".join("%s=%r" % kv for kv in changes.items())))
            else:
                _tune_log("gpuenv --tune: DataLoader at %s left as it is: %s" % (where, skipped))
        _REPORT.note({k: v for k, v in changes.items() if k in _SETTINGS}, {})
        kwargs.update(changes)
        original(self, *args, **kwargs)

    loader.__init__ = __init__
    loader._gpuenv_tuned = True


# ---- Running code right after a module is imported ----

class _Loader:
    """Runs the real loader of the module, then `then(module)`."""

    def __init__(self, real, name, then):
        self._real, self._name, self._then = real, name, then

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        self._real.exec_module(module)
        try:
            self._then(module)
        except Exception as e:  # never break the script's import
            _log("gpuenv start-up hook: %s: %r" % (self._name, e))

    def __getattr__(self, name):
        return getattr(self._real, name)


class _AfterImport:
    """Waits for `import NAME`; imports nothing itself."""

    def __init__(self, name, then):
        self.name, self._then = name, then

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _AfterImport) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, name, self._then)
                return spec
        return None


def _in_order(*steps):
    def run(module):
        for step in steps:
            try:
                step(module)
            except Exception as e:  # one failing step leaves the others
                _log("gpuenv start-up hook: %s: %r" % (module.__name__, e))
    return run


def _after_import(name, then):
    """Runs then(module) right after `import NAME`; several for one NAME run in order."""
    for f in sys.meta_path:
        if isinstance(f, _AfterImport) and f.name == name:
            f._then = _in_order(f._then, then)
            return
    sys.meta_path.insert(0, _AfterImport(name, then))


def _chain():
    """Runs the next sitecustomize on sys.path as site.py would have: it
    becomes sys.modules["sitecustomize"], and what it changes (sys.path
    included) stays changed. This module stays importable as
    gpuenv_sitecustomize."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.get("sitecustomize")
    sys.modules["gpuenv_sitecustomize"] = ours
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)
    except Exception as e:  # what site.py does with a failing sitecustomize
        sys.modules["sitecustomize"] = ours
        _log("gpuenv start-up hook: the next sitecustomize failed: %r" % (e,))


def _load_beside(name):
    """The module NAME.py beside this file, whatever else is on sys.path."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def _install():
    if os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1":
        _after_import("torch.backends.cuda", _keep_tf32_switches_in_step)
    # --tune is for the job's own interpreter (and its DataLoader workers,
    # which fork from it or need no settings): the Pythons it starts itself
    # do not inherit them (docs/feedback.md, "Which Pythons --tune reaches").
    wanted = _wanted(os.environ.pop(_TUNE_VAR, ""))
    # Watched without --tune, the same patches only note the settings the script
    # passes itself (the record's yours=), changing nothing.
    watched = bool(os.environ.get("GPUENV_SPEED_FILE"))
    if wanted or watched:
        _after_import("torch.utils.data", lambda module: _patch_dataloader(module, wanted))
        _after_import("transformers.training_args", lambda module: _patch_trainer(module, wanted))
    # The job's own speed for gpuenv run's record (gpuenv_speed.py).
    if watched:
        try:
            _load_beside("gpuenv_speed").install(_after_import, _REPORT.words if wanted else _REPORT.yours_words)
        except Exception as e:  # never break the script's start
            _log("gpuenv start-up hook: speed: %r" % (e,))
    # --tune=+precision: bf16 autocast (gpuenv_precision.py), only when asked.
    precision = os.environ.pop("GPUENV_TUNE_PRECISION", "")
    if precision:
        _after_import("torch", lambda torch: _load_beside("gpuenv_precision").install(
            torch, precision, quiet=not _SPEAKS))


def _patch_trainer(module, wanted):
    _load_beside("gpuenv_trainer").patch(module, wanted, _cuda_available, _tune_log, _REPORT.note)


_SPEAKS = _speaks_for_job()
_install()
_chain()
