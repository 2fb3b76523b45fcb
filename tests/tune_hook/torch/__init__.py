"""A stand-in torch for the --tune hook's test: just torch.utils.data and torch.cuda."""
from . import cuda  # noqa: F401
from . import optim  # noqa: F401
