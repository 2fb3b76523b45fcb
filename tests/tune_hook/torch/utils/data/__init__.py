"""Stand-in torch.utils.data: DataLoader with the real signature (torch 2.9),
recording the arguments it ended up with in CREATED."""
from .dataloader import _SingleProcessDataLoaderIter

CREATED = []


class Dataset:
    pass


class IterableDataset(Dataset):
    pass


class TensorDataset(Dataset):
    def __init__(self, *tensors):
        self.tensors = tensors


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.args = {"batch_size": batch_size, "num_workers": num_workers, "pin_memory": pin_memory,
                     "persistent_workers": persistent_workers, "drop_last": drop_last,
                     "multiprocessing_context": multiprocessing_context}
        CREATED.append(self.args)
        self.dataset, self.batch_size, self.num_workers, self.pin_memory = dataset, batch_size, num_workers, pin_memory
        self.persistent_workers, self.drop_last = persistent_workers, drop_last

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)
