"""Stand-in torch.optim: an Optimizer whose step() runs the global post hooks, as torch's does."""
from .optimizer import Optimizer  # noqa: F401
