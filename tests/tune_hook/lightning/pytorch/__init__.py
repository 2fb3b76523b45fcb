import inspect

from torch.utils.data import DataLoader


class LightningModule:
    pass


class Trainer:
    def fit(self, module):
        loader = module.train_dataloader()
        params = inspect.signature(DataLoader.__init__).parameters
        kwargs = {k: getattr(loader, k) for k in params if k not in ("self", "dataset") and hasattr(loader, k)}
        self.train_dataloader = DataLoader(loader.dataset, **kwargs)  # with its sampler, in real Lightning
        return self.train_dataloader
