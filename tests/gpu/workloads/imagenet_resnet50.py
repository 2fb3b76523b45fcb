"""An ImageNet-style training loop, shaped like the reference script people
start from (pytorch/examples imagenet/main.py): torchvision's ResNet-50,
images through PIL transforms (RandomResizedCrop, RandomHorizontalFlip,
ToTensor, Normalize), the loader's default 4 workers with pin_memory=True and
shuffle, SGD with momentum 0.9 and weight decay 1e-4, fp32 as written, a
`non_blocking` copy per batch. The data is fake (torchvision's FakeData makes
a PIL image per sample), at a JPEG-decoded ImageNet photo's typical size.
Prints one JSON line: images/s after the warm-up."""
import argparse

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T

from common import Meter


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("-b", "--batch-size", type=int, default=256)
    p.add_argument("-j", "--workers", type=int, default=4)
    a = p.parse_args()
    normalize = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = torchvision.datasets.FakeData(
        size=a.steps * a.batch_size + a.batch_size, image_size=(3, 375, 500), num_classes=1000,
        transform=T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), normalize]))
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=a.batch_size, shuffle=True,
                                               num_workers=a.workers, pin_memory=True)
    device = torch.device("cuda")
    model = torchvision.models.resnet50().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    model.train()
    meter = Meter(a.warmup)
    for i, (images, target) in enumerate(train_loader):
        if i >= a.steps:
            break
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.tick(images.shape[0])
    meter.report("imagenet-resnet50", "images/s", workers=train_loader.num_workers,
                 pin_memory=train_loader.pin_memory, loss=round(loss.item(), 4))


if __name__ == "__main__":
    main()
