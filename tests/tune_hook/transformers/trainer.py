from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model=None, args=None, train_dataset=None):
        self.model, self.args, self.train_dataset = model, args, train_dataset

    def get_train_dataloader(self):
        params = {"batch_size": self.args.per_device_train_batch_size,
                  "num_workers": self.args.dataloader_num_workers,
                  "pin_memory": self.args.dataloader_pin_memory,
                  "persistent_workers": self.args.dataloader_persistent_workers,
                  "drop_last": self.args.dataloader_drop_last}
        return DataLoader(self.train_dataset, **params)
