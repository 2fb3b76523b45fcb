"""`gpuenv run --tune` for Hugging Face's Trainer (docs/feedback.md,
"Trainer and Lightning"). Trainer builds its DataLoaders with num_workers,
pin_memory and persistent_workers passed explicitly from TrainingArguments
(dataloader_num_workers=0 by default), so the DataLoader patch in
sitecustomize.py never sees a default there. The level the user did not
choose is TrainingArguments: its fields the script did not pass get the
settings; a field the script passed, by keyword or by position, stays as it
is. Lightning needs nothing here: its loaders are the script's own
DataLoader(...) calls (and Lightning's re-creations of them copy the values
the loader got).
"""
import dataclasses

# --tune's setting -> the TrainingArguments field that Trainer passes on.
FIELDS = {"num_workers": "dataloader_num_workers", "pin_memory": "dataloader_pin_memory",
          "persistent_workers": "dataloader_persistent_workers"}


def _changes(args, wanted, cuda):
    explicit = getattr(args, "_gpuenv_explicit", None)
    if explicit is None:
        return {}
    changes = {}
    field = FIELDS["num_workers"]
    if "num_workers" in wanted and field not in explicit and hasattr(args, field):
        changes[field] = wanted["num_workers"]
    workers = changes.get(field, getattr(args, field, 0)) or 0
    field = FIELDS["pin_memory"]
    if wanted.get("pin_memory") and field not in explicit and hasattr(args, field) and cuda():
        changes[field] = True
    field = FIELDS["persistent_workers"]
    if wanted.get("persistent_workers") and field not in explicit and hasattr(args, field) and workers > 0:
        changes[field] = True
    return {k: v for k, v in changes.items() if getattr(args, k) != v}


def patch(module, wanted, cuda, log, note=None):
    """Wraps module.TrainingArguments (transformers.training_args): __new__
    notes which fields the call passed (it is inherited by every subclass,
    where each dataclass has an __init__ of its own), __post_init__ sets the
    others from `wanted` before Trainer's own checks run. `note(applied,
    yours)` hears what gpuenv's record keeps (sitecustomize.py's _Report)."""
    cls = getattr(module, "TrainingArguments", None)
    if cls is None or getattr(cls, "_gpuenv_tuned", False) or not dataclasses.is_dataclass(cls):
        return
    original_new = cls.__new__
    original_post_init = getattr(cls, "__post_init__", None)
    told = set()

    def __new__(klass, *args, **kwargs):
        self = original_new(klass) if original_new is not object.__new__ else object.__new__(klass)
        names = [f.name for f in dataclasses.fields(klass) if f.init]
        object.__setattr__(self, "_gpuenv_explicit", set(kwargs) | set(names[:len(args)]))
        return self

    def __post_init__(self, *args, **kwargs):
        try:
            changes = _changes(self, wanted, cuda)
        except Exception as e:  # never break the script's arguments
            changes = {}
            log("gpuenv --tune: TrainingArguments left as they are: an error in the hook (%r)" % (e,))
        for name, value in changes.items():
            object.__setattr__(self, name, value)
        if note is not None:  # what Trainer will pass on: gpuenv's values, the fields the script set, its defaults
            explicit = getattr(self, "_gpuenv_explicit", None) or set()
            knobs = {f: k for k, f in FIELDS.items() if hasattr(self, f)}
            applied = {k: getattr(self, f) for f, k in knobs.items()
                       if f not in explicit and k in wanted and getattr(self, f) == wanted[k]}
            note(applied, {k: getattr(self, f) for f, k in knobs.items() if f in explicit},
                 {k for f, k in knobs.items() if f not in explicit and k not in applied})
        kind = type(self).__name__
        if changes and kind not in told:
            told.add(kind)
            log("gpuenv --tune: %s: %s (yours kept: the fields you set)"
                % (kind, ", ".join("%s=%r" % kv for kv in changes.items())))
        if original_post_init is not None:
            return original_post_init(self, *args, **kwargs)

    cls.__new__ = staticmethod(__new__)
    cls.__post_init__ = __post_init__
    cls._gpuenv_tuned = True

