"""The stand-in's tensors, grad mode and autocast, with the one behaviour of
real autocast that matters for correctness: bf16 copies of leaf weights that
require grad are cached until the outermost autocast region exits
(aten/src/ATen/autocast_mode.cpp, cached_cast)."""


class dtype:
    def __init__(self, name, floating=True):
        self.name, self.floating = name, floating

    def __repr__(self):
        return "torch." + self.name


float32, bfloat16, float16, int64 = dtype("float32"), dtype("bfloat16"), dtype("float16"), dtype("int64", False)
_default = [float32]
_grad = [True]
_ac = {"enabled": False, "dtype": bfloat16, "nesting": 0, "cache": {}}


class Tensor:
    """A scalar with a dtype: enough to see which weights a forward pass used."""

    def __init__(self, value, dtype=float32, requires_grad=False, leaf=True):
        self.value, self.dtype, self.requires_grad, self.is_leaf = value, dtype, requires_grad, leaf

    def is_floating_point(self):
        return self.dtype.floating

    def float(self):
        return Tensor(self.value, float32, self.requires_grad, False)

    def to(self, d):
        return Tensor(self.value, d, self.requires_grad, False)

    def __repr__(self):
        return "Tensor(%r, %r)" % (self.value, self.dtype)


def cast_for_matmul(t):
    """What autocast does to a matmul's operand: bf16, from the cache for leaf weights."""
    if not _ac["enabled"] or t.dtype is not float32:
        return t
    if t.is_leaf and t.requires_grad:
        if id(t) not in _ac["cache"]:
            _ac["cache"][id(t)] = Tensor(t.value, _ac["dtype"], False, False)
        return _ac["cache"][id(t)]
    return Tensor(t.value, _ac["dtype"], False, False)


def is_grad_enabled():
    return _grad[0]


class no_grad:
    def __enter__(self):
        self.prev = _grad[0]
        _grad[0] = False

    def __exit__(self, *exc):
        _grad[0] = self.prev


def is_autocast_enabled(device_type="cuda"):
    return _ac["enabled"]


def clear_autocast_cache():
    _ac["cache"].clear()


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    _default[0] = d
