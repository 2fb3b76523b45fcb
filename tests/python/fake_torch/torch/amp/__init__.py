from . import autocast_mode  # noqa: F401
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
