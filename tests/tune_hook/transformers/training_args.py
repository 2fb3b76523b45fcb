from dataclasses import dataclass, field


@dataclass
class TrainingArguments:
    output_dir: str = None
    per_device_train_batch_size: int = 8
    learning_rate: float = 5e-5
    dataloader_drop_last: bool = False
    dataloader_num_workers: int = 0
    dataloader_prefetch_factor: int = None
    dataloader_pin_memory: bool = True
    dataloader_persistent_workers: bool = False
    report_to: list = field(default_factory=list)

    def __post_init__(self):
        if self.dataloader_persistent_workers and self.dataloader_num_workers == 0:
            raise ValueError("dataloader_persistent_workers needs dataloader_num_workers > 0")
        self.checked = True


@dataclass
class Seq2SeqTrainingArguments(TrainingArguments):
    predict_with_generate: bool = False
