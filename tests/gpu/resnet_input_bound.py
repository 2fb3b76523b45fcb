"""An input-bound ResNet-50 training loop, written as new users write it:
synthetic images augmented on the CPU in the Dataset's __getitem__, and a
DataLoader left at its defaults (no workers). Plain torch: no torchvision.
Prints one JSON line with images/s. Used by tests/gpu/feedback.sh."""
import argparse
import json
import math
import time
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def to_bytes(t):
    try:
        return t.numpy().tobytes()
    except Exception:  # a torch without numpy
        return bytes(t.flatten().tolist())


class SyntheticImages(Dataset):
    """Compressed images decoded on the CPU (zlib, as PNG is: one thread, like
    PIL's decoders), with the usual training augmentation."""

    def __init__(self, n=100_000, size=224, source=320, distinct=64):
        self.n, self.size, self.source = n, size, source
        g = torch.Generator().manual_seed(0)
        self.encoded = []
        for _ in range(distinct):  # smooth noise: it compresses, as photos do
            small = torch.rand(1, 3, source // 8, source // 8, generator=g)
            img = (F.interpolate(small, size=(source, source), mode="bicubic", align_corners=False)[0] * 255)
            self.encoded.append(zlib.compress(to_bytes(img.clamp(0, 255).to(torch.uint8)), 6))
        blur = torch.exp(-torch.linspace(-2, 2, 7) ** 2)
        self.blur = (blur / blur.sum()).view(1, 1, 1, 7).repeat(3, 1, 1, 1)
        self.labels = torch.randint(0, 1000, (n,), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        raw = bytearray(zlib.decompress(self.encoded[i % len(self.encoded)]))
        img = torch.frombuffer(raw, dtype=torch.uint8).view(3, self.source, self.source)
        # random resized crop
        scale = 0.35 + 0.65 * torch.rand(1, generator=g).item()
        side = max(32, int(self.source * math.sqrt(scale)))
        y, x = torch.randint(0, self.source - side + 1, (2,), generator=g).tolist()
        crop = img[:, y:y + side, x:x + side].float().unsqueeze(0) / 255
        out = F.interpolate(crop, size=(self.size, self.size), mode="bilinear", antialias=True, align_corners=False)
        # horizontal flip, colour jitter, a light blur, normalise
        if torch.rand(1, generator=g).item() < 0.5:
            out = out.flip(-1)
        jitter = 0.8 + 0.4 * torch.rand(3, 1, 1, generator=g)
        out = (out[0] * jitter).clamp(0, 1).unsqueeze(0)
        out = F.conv2d(F.pad(out, (3, 3, 0, 0), mode="reflect"), self.blur, groups=3)
        out = F.conv2d(F.pad(out, (0, 0, 3, 3), mode="reflect"), self.blur.transpose(2, 3), groups=3)
        return (out[0] - MEAN) / STD, self.labels[i]


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for b in range(blocks):
                layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
                cin = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--seconds", type=float, default=0, help="train at least this long (after --steps)")
    a = p.parse_args()
    torch.manual_seed(0)
    model = ResNet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(SyntheticImages(), batch_size=a.batch, shuffle=True)
    it = iter(loader)
    start, seen = None, 0
    step = 0
    while step < a.warmup + a.steps or time.perf_counter() - start < a.seconds:
        if step == a.warmup:
            torch.cuda.synchronize()
            start, seen = time.perf_counter(), 0
        x, y = next(it)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        seen += x.shape[0]
        step += 1
    torch.cuda.synchronize()
    dt = time.perf_counter() - start
    assert math.isfinite(loss.item()), "loss is not finite"
    print(json.dumps({"images_per_s": seen / dt, "seconds": dt, "batch": a.batch,
                      "num_workers": loader.num_workers, "pin_memory": loader.pin_memory,
                      "loss": loss.item(), "gpu": torch.cuda.get_device_name(0)}), flush=True)


if __name__ == "__main__":
    main()
