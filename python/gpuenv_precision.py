"""bf16 autocast for an fp32 training script, from outside it: `gpuenv run
--tune=+precision` (docs/precision.md). sitecustomize.py calls install()
once the script has imported torch, when GPUENV_TUNE_PRECISION=bf16 (gpuenv
sets it only after checking that the job's GPUs have bf16 tensor cores).

What is patched, and why:

- torch.nn.Module.__call__. The outermost module call (not the calls nested
  in it), while grad is enabled and no autocast is on, runs as if the script
  had written `with torch.autocast("cuda", dtype=torch.bfloat16):` around it.
  A training step's forward pass is such a call whatever the script looks
  like (DDP's and torch.compile's wrappers are modules too), and so is its
  loss when it is a module (nn.CrossEntropyLoss() and every torch.nn loss
  are). A module call is the one unit every script has; a wrapper keyed to
  the optimizer or the training loop would miss gradient accumulation,
  several models, or loops the hook cannot see. backward(), the optimizer
  step, the weights and their gradients stay fp32: autocast casts copies
  for the region's operations only, and bf16 keeps fp32's range, so no
  GradScaler is needed.
- Its floating outputs that autocast made bfloat16 are cast back to float32
  as they leave the region, so what the script does with them (its own
  loss, metrics, .numpy(), dtype checks) sees the float32 it was written
  for. Functional losses called after the model (F.cross_entropy(out, y))
  therefore need no patch: autocast runs them in float32 (its fp32 list),
  on the same values.
- torch.nn.functional.binary_cross_entropy: autocast refuses it ("unsafe to
  autocast") where fp32 ran it; inside a region it runs with autocast off
  on float32 inputs, as the error message advises.
- The cast cache. Autocast keeps bf16 copies of leaf weights for the life of
  a region. Here a region is one outermost call, and the cache is cleared
  when it ends (torch.clear_autocast_cache(), whatever the nesting): no
  forward pass is ever handed a copy of weights from before an optimizer
  step. (tests/gpu/precision_train.py --variant stale shows what a region
  that spans steps does to training.)
- Left in fp32: calls under torch.no_grad() or inference_mode (evaluation
  and inference keep their fp32 figures, which the script's author compares
  with), and calls while torch.compile traces.
- Left alone from then on, said once on stderr: a script that sets its own
  precision. It enters autocast itself (torch.autocast, torch.amp,
  torch.cuda.amp, or Lightning's or Accelerate's, which use them; entries
  from inside torch, such as activation checkpointing's recomputation, do
  not count), makes a GradScaler, calls a module whose parameters are not
  all float32 (.half(), .bfloat16()), sets a default dtype other than
  float32, or asks for IEEE fp32 (set_float32_matmul_precision("highest"),
  allow_tf32 = False, fp32_precision = "ieee"). A request for TF32 ("high",
  "tf32") is a request for speed, not exactness: it does not stop the hook.
"""
import os
import sys
import threading
import weakref

_PREFIX = "gpuenv --tune=+precision: "
_local = threading.local()  # .depth: 1 inside a region this hook opened
_state = {"off": None, "regions": 0, "quiet": False}  # quiet: a rank other than 0 (sitecustomize.py)
_told = set()
_MAX_TOLD = 8


def _log(message):
    if _state["quiet"]:
        return
    sys.stderr.write(_PREFIX + message + "\n")
    sys.stderr.flush()


def _tell_once(key, message):
    if key not in _told and len(_told) < _MAX_TOLD:
        _told.add(key)
        _log(message)


def _where(frame):
    return "%s:%d" % (os.path.basename(frame.f_code.co_filename), frame.f_lineno)


class _Hook:
    """Everything install() patched, and the few torch functions it calls on
    the hot path, looked up once."""

    def __init__(self, torch):
        self.torch = torch
        self.torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        amp = torch.amp.autocast_mode
        self.autocast = amp.autocast
        self.enter, self.exit = amp.autocast.__enter__, amp.autocast.__exit__
        self.call = torch.nn.Module.__call__
        compiler = getattr(torch, "compiler", None)
        self.compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
        self.checked = weakref.WeakKeyDictionary()  # module -> dtype of its first parameter when checked
        self.cuda_ok = None

    def autocast_on(self):
        try:
            return self.torch.is_autocast_enabled("cuda")
        except TypeError:  # torch before 2.4
            return self.torch.is_autocast_enabled()

    # ---- who asked: the script, or torch itself ----

    def caller(self, frame, skip):
        """The first frame outside this file and outside torch's files whose
        names end with one of `skip` (autocast's and GradScaler's own
        subclasses), and whether it is torch's own code."""
        here = os.path.abspath(__file__)
        while frame is not None:
            name = os.path.abspath(frame.f_code.co_filename)
            if name != here and not (name.startswith(self.torch_dir) and name.endswith(skip)):
                return frame, name.startswith(self.torch_dir)
            frame = frame.f_back
        return None, True

    def script_did(self, what, skip=()):
        """Stops the hook when the script itself (not torch) did `what`."""
        frame, internal = self.caller(sys._getframe(2), tuple(skip) or ("\0",))
        if internal:
            return
        self.stop(what, frame)

    def stop(self, what, frame):
        """Stops the hook: the script did `what` at `frame`."""
        if _state["off"] is not None:
            return
        where = _where(frame)
        _state["off"] = what + " at " + where
        ran = _state["regions"]
        _log("left alone from here: the script %s (%s)%s" % (
            what, where, "; %d forward passes before it ran under bf16 autocast" % ran if ran else ""))

    # ---- the region ----

    def may(self, module):
        """False (and the hook off) when `module` is not an fp32 model, or
        CUDA cannot run bf16."""
        if self.cuda_ok is None:
            self.cuda_ok = self.cuda_check()
        if not self.cuda_ok:
            return False
        first = next(iter(module.parameters()), None)
        dtype = getattr(first, "dtype", None)
        if module in self.checked and self.checked[module] == dtype:
            return True
        float32 = self.torch.float32
        for p in module.parameters():
            if p.is_floating_point() and p.dtype != float32:
                _state["off"] = "%s has %s parameters" % (type(module).__name__, p.dtype)
                _log("left alone: %s's parameters are %s (.half(), .bfloat16() or loaded so): the script set "
                     "its own precision" % (type(module).__name__, p.dtype))
                return False
        if self.torch.get_default_dtype() != float32:
            _state["off"] = "default dtype"
            _log("left alone: the default dtype is %s: the script set its own precision"
                 % (self.torch.get_default_dtype(),))
            return False
        self.checked[module] = dtype
        return True

    def cuda_check(self):
        cuda = self.torch.cuda
        if not cuda.is_available():
            _state["off"] = "no CUDA"
            _log("left alone: CUDA is not available to this process")
            return False
        cc = cuda.get_device_capability()
        if cc[0] < 8:
            _state["off"] = "no bf16"
            _log("left alone: this GPU (cc %d.%d) has no bf16 tensor cores" % cc)
            return False
        return True

    def region(self, module, args, kwargs):
        ac = self.autocast("cuda", dtype=self.torch.bfloat16)
        _local.depth = 1
        try:
            self.enter(ac)
            try:
                out = self.call(module, *args, **kwargs)
            finally:
                self.exit(ac, None, None, None)
                self.torch.clear_autocast_cache()  # even when nested in another region
        finally:
            _local.depth = 0
        _state["regions"] += 1
        return self.to_fp32(out)

    def to_fp32(self, out, depth=0):
        """`out` with its bfloat16 tensors float32, at any depth (to 8) of
        tuples, lists, namedtuples, dicts and dataclasses; the containers
        keep their types. Plain tuples, lists, namedtuples and dicts are
        rebuilt; other dicts (OrderedDict, transformers' ModelOutput, a
        dataclass that is an OrderedDict) and other dataclasses are changed
        in place, since their constructors may want other arguments."""
        torch = self.torch
        if isinstance(out, torch.Tensor):
            return out.float() if out.dtype == torch.bfloat16 else out
        if depth >= 8 or out is None or isinstance(out, (str, bytes, int, float)):
            return out
        if type(out) in (tuple, list):
            return type(out)(self.to_fp32(x, depth + 1) for x in out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):  # a namedtuple
            return type(out)(*(self.to_fp32(x, depth + 1) for x in out))
        if type(out) is dict:
            return {k: self.to_fp32(v, depth + 1) for k, v in out.items()}
        if isinstance(out, dict):  # in place: ModelOutput's __setitem__ sets its attribute too
            for k, v in list(out.items()):
                new = self.to_fp32(v, depth + 1)
                if new is not v:
                    out[k] = new
            return out
        fields = getattr(type(out), "__dataclass_fields__", None)
        if fields:  # a dataclass instance: its fields in place (frozen ones too: the call just made it)
            for name in fields:
                v = getattr(out, name, None)
                new = self.to_fp32(v, depth + 1)
                if new is not v:
                    object.__setattr__(out, name, new)
        return out


def _patch_module_call(h):
    torch = h.torch
    compiling, call = h.compiling, h.call  # the traced path reads closure cells only

    def __call__(self, *args, **kwargs):
        # compiling() first: torch.compile traces this function for every module it inlines, and a
        # traced read of _local (a threading.local) or _state would be a graph break or a guard.
        if (compiling() or getattr(_local, "depth", 0) or _state["off"] is not None
                or not torch.is_grad_enabled() or h.autocast_on() or not h.may(self)):
            return call(self, *args, **kwargs)
        if getattr(self, "_original_forward", None) is not None:
            # accelerate's prepare() (Trainer's bf16/fp16, Accelerator(mixed_precision=...)) wraps the
            # model's forward in its own autocast and keeps the original: the script's own precision,
            # entered only inside this call, so seen here, before the first step.
            h.stop("wraps the model's forward, as accelerate's mixed precision does (_original_forward)",
                   sys._getframe(1))
            return call(self, *args, **kwargs)
        if _state["regions"] == 0:
            caller = sys._getframe(1)
            _log("bf16 autocast around each outermost module call while grad is enabled, first %s at %s; "
                 "outputs come back as float32, weights, gradients and the optimizer stay fp32 "
                 "(docs/precision.md)" % (type(self).__name__, _where(caller)))
        return h.region(self, args, kwargs)

    torch.nn.Module.__call__ = __call__


def _patch_autocast_entry(h):
    enter = h.enter

    def __enter__(self):
        h.script_did("enters autocast itself", ("amp/autocast_mode.py",))
        return enter(self)

    h.autocast.__enter__ = __enter__
    scaler = getattr(h.torch.amp, "GradScaler", None)
    if scaler is not None:
        init = scaler.__init__

        def __init__(self, *args, **kwargs):
            h.script_did("makes a GradScaler (its own mixed precision)", ("amp/grad_scaler.py",))
            init(self, *args, **kwargs)

        scaler.__init__ = __init__


def _patch_precision_setters(h):
    torch = h.torch
    setter = torch.set_float32_matmul_precision

    def set_float32_matmul_precision(precision):
        if precision == "highest":
            h.script_did("asks for IEEE fp32 matmuls (set_float32_matmul_precision('highest'))")
        return setter(precision)

    torch.set_float32_matmul_precision = set_float32_matmul_precision
    default_setter = torch.set_default_dtype

    def set_default_dtype(d):
        if d != torch.float32:
            h.script_did("sets the default dtype to %s" % (d,))
        return default_setter(d)

    torch.set_default_dtype = set_default_dtype
    for owner in (getattr(torch.backends.cuda, "matmul", None), getattr(torch.backends, "cudnn", None)):
        if owner is not None:
            _watch_switches(h, type(owner))


def _watch_switches(h, cls):
    setattr_ = cls.__setattr__

    def __setattr__(self, name, value):
        if (name == "allow_tf32" and value is False) or (name == "fp32_precision" and value == "ieee"):
            h.script_did("asks for IEEE fp32 (%s = %r)" % (name, value))
        setattr_(self, name, value)

    cls.__setattr__ = __setattr__


def _patch_binary_cross_entropy(h):
    functional = h.torch.nn.functional
    bce = functional.binary_cross_entropy

    def binary_cross_entropy(input, target, *args, **kwargs):
        if not getattr(_local, "depth", 0) or not h.autocast_on():
            return bce(input, target, *args, **kwargs)
        ac = h.autocast("cuda", enabled=False)
        h.enter(ac)
        try:
            return bce(input.float(), target.float(), *args, **kwargs)
        finally:
            h.exit(ac, None, None, None)

    functional.binary_cross_entropy = binary_cross_entropy


def install(torch, precision, quiet=False):
    """Patches torch for bf16 autocast (precision "bf16"); quiet: say nothing
    (under torchrun or Slurm, the ranks other than 0: rank 0 says it for the job)."""
    _state["quiet"] = quiet
    if precision != "bf16":
        _log("unknown precision %r (gpuenv sets bf16): nothing patched" % (precision,))
        return None
    if getattr(torch.nn.Module, "_gpuenv_precision", False):
        return None
    h = _Hook(torch)
    _patch_autocast_entry(h)
    _patch_precision_setters(h)
    _patch_binary_cross_entropy(h)
    _patch_module_call(h)
    torch.nn.Module._gpuenv_precision = True
    _state["hook"] = h
    return h
