"""A training loop on the stand-in torch: batches from a DataLoader left at
its defaults and an optimizer step after each, faster with workers (as an
input-bound job is). Prints the loader's arguments."""
import json
import time

import torch
import torch.utils.data as data


class Images(data.Dataset):
    def __len__(self):
        return 24


loader = data.DataLoader(Images(), batch_size=2)
opt = torch.optim.Optimizer()
pause = 0.004 if loader.num_workers else 0.02
for batch in loader:
    time.sleep(pause)
    opt.step()
print(json.dumps(data.CREATED[0]))
