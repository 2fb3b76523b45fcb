"""torch.backends.cudnn: a module object of its own class, as torch makes it."""
import sys
import types


class CudnnModule(types.ModuleType):
    allow_tf32 = True


sys.modules[__name__] = CudnnModule(__name__)
