"""Makes DataLoaders as a training script would and prints what each got."""
import json

import torch.utils.data as data


class Images(data.Dataset):
    def __len__(self):
        return 8


class Fake:
    is_cuda = True


class Stream(data.IterableDataset):
    pass


class MyLoader(data.DataLoader):
    pass


data.DataLoader(Images(), batch_size=4)                               # 0: defaults
data.DataLoader(Images(), 4, True, None, None, 2)                     # 1: num_workers=2 by position
data.DataLoader(Images(), batch_size=4, pin_memory=False)             # 2: pin_memory refused by the script
data.DataLoader(Images(), num_workers=0)                              # 3: num_workers=0 written out
data.DataLoader(Stream())                                             # 4: an IterableDataset
data.DataLoader(data.TensorDataset(Fake()))                           # 5: CUDA tensors
MyLoader(Images(), drop_last=True)                                    # 6: a subclass
for _ in range(3):
    data.DataLoader(Images())                                         # 7-9: one call site, one log line
print(json.dumps(data.CREATED))
