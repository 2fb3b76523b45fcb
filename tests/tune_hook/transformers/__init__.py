"""Stand-in transformers for gpuenv's Trainer tuning: TrainingArguments (a
dataclass with the real dataloader_* fields and defaults) in
transformers.training_args, and a Trainer that builds its loader as the real
one does, every loader argument passed explicitly from the arguments."""
from .training_args import TrainingArguments  # noqa: F401
from .trainer import Trainer  # noqa: F401
