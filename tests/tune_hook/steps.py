"""A training loop on the stand-in torch: batches from a DataLoader left at
its defaults and an optimizer step after each, faster with workers (as an
input-bound job is). Prints the loader's arguments. An argument N: the
script passes num_workers=N itself (as the ImageNet example does)."""
import json
import sys
import time

import torch
import torch.utils.data as data


class Images(data.Dataset):
    def __len__(self):
        return 24


own = {"num_workers": int(sys.argv[1])} if len(sys.argv) > 1 else {}
loader = data.DataLoader(Images(), batch_size=2, **own)
opt = torch.optim.Optimizer()
pause = 0.004 if loader.num_workers else 0.02
for batch in loader:
    time.sleep(pause)
    opt.step()
print(json.dumps(data.CREATED[0]))
