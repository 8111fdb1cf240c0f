#!/usr/bin/env python3
"""PyTorch twins of hpcnn's models (src/engine/models.cpp), layer for layer.

    build(name, classes=10, image_size=None, impl="auto") -> (module, (C, H, W), impl_used)

lenet5 and alexnet are defined here. resnet18/resnet50 come from torchvision when it can be
imported (impl "auto" or "torchvision") and otherwise from the definitions below, which follow
torchvision's layout exactly: same module names, same parameter shapes; check_against_torchvision()
proves it wherever torchvision is installed. Running this file prints the parameter counts and
asserts that they equal hpcnn's (`hpcnn-train --list`).

Works with any torch >= 1.10 (Debian's 1.13 and the current PyPI wheel).
"""
import sys

import torch
from torch import nn

# hpcnn's parameter counts at 3x32x32 (alexnet: 3x64x64) with 10 classes.
EXPECTED_PARAMS = {
    "lenet5": 62_006,
    "alexnet": 23_490_378,
    "resnet18": 11_181_642,
    "resnet50": 23_528_522,
}

# The input size hpcnn uses by default for the cifar10 data set shape (alexnet resizes to 64).
DEFAULT_IMAGE_SIZE = {"lenet5": 32, "alexnet": 64, "resnet18": 32, "resnet50": 32}

MODELS = tuple(EXPECTED_PARAMS)


class LeNet5(nn.Module):
    """conv5x5(6)-relu-maxpool2-conv5x5(16)-relu-maxpool2-fc120-relu-fc84-relu-fc10, no padding."""

    def __init__(self, classes=10, in_channels=3, image_size=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(6, 16, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        )
        side = ((image_size - 4) // 2 - 4) // 2
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * side * side, 120), nn.ReLU(inplace=True),
            nn.Linear(120, 84), nn.ReLU(inplace=True),
            nn.Linear(84, classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


class AlexNet64(nn.Module):
    """AlexNet for 64x64 inputs, as hpcnn builds it (conv1 11x11/4 pad 5, 2x2 max pools)."""

    def __init__(self, classes=10, in_channels=3, image_size=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 64, 11, stride=4, padding=5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        )
        side = (image_size + 10 - 11) // 4 + 1
        side = side // 2 // 2 // 2
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(0.5), nn.Linear(256 * side * side, 4096), nn.ReLU(inplace=True),
            nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


# ---------------------------------------------------------------- ResNet, torchvision's layout
def _conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


def _conv1x1(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, width, stride=1, downsample=None):
        super().__init__()
        self.conv1 = _conv3x3(cin, width, stride)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(width, width)
        self.bn2 = nn.BatchNorm2d(width)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + identity)


class Bottleneck(nn.Module):
    """ResNet v1.5: the stride is on the 3x3 convolution."""
    expansion = 4

    def __init__(self, cin, width, stride=1, downsample=None):
        super().__init__()
        self.conv1 = _conv1x1(cin, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = _conv3x3(width, width, stride)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = _conv1x1(width, width * 4)
        self.bn3 = nn.BatchNorm2d(width * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + identity)


class ResNet(nn.Module):
    """7x7/2 stem + 3x3/2 max pool, four stages, global average pool, fc (torchvision)."""

    def __init__(self, block, blocks, classes=10, in_channels=3):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.inplanes = 64
        self.layer1 = self._stage(block, 64, blocks[0], 1)
        self.layer2 = self._stage(block, 128, blocks[1], 2)
        self.layer3 = self._stage(block, 256, blocks[2], 2)
        self.layer4 = self._stage(block, 512, blocks[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _stage(self, block, width, count, stride):
        downsample = None
        if stride != 1 or self.inplanes != width * block.expansion:
            downsample = nn.Sequential(_conv1x1(self.inplanes, width * block.expansion, stride),
                                       nn.BatchNorm2d(width * block.expansion))
        layers = [block(self.inplanes, width, stride, downsample)]
        self.inplanes = width * block.expansion
        layers += [block(self.inplanes, width) for _ in range(1, count)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


_RESNETS = {"resnet18": (BasicBlock, (2, 2, 2, 2)), "resnet50": (Bottleneck, (3, 4, 6, 3))}


def _torchvision():
    try:
        import torchvision.models  # noqa: F401
        return torchvision.models
    except Exception:  # not installed, or built for another torch
        return None


def build(name, classes=10, image_size=None, impl="auto"):
    """Returns (module, (C, H, W), impl) where impl is "hpcnn-twin", "torchvision" or "local"."""
    if name not in EXPECTED_PARAMS:
        raise ValueError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    size = image_size or DEFAULT_IMAGE_SIZE[name]
    if name == "lenet5":
        return LeNet5(classes, 3, size), (3, size, size), "hpcnn-twin"
    if name == "alexnet":
        return AlexNet64(classes, 3, size), (3, size, size), "hpcnn-twin"
    tv = _torchvision() if impl in ("auto", "torchvision") else None
    if impl == "torchvision" and tv is None:
        raise RuntimeError("torchvision was asked for but cannot be imported")
    if tv is not None:
        return getattr(tv, name)(num_classes=classes), (3, size, size), "torchvision"
    block, blocks = _RESNETS[name]
    return ResNet(block, blocks, classes), (3, size, size), "local"


def param_count(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def check_against_torchvision():
    """Asserts the local ResNets have torchvision's parameter and buffer names and shapes.
    Returns False when torchvision is not available (nothing checked)."""
    tv = _torchvision()
    if tv is None:
        return False
    for name, (block, blocks) in _RESNETS.items():
        mine = {k: tuple(v.shape) for k, v in ResNet(block, blocks, 10).state_dict().items()}
        theirs = {k: tuple(v.shape) for k, v in getattr(tv, name)(num_classes=10).state_dict().items()}
        assert mine == theirs, f"{name}: local definition differs from torchvision"
    return True


def main():
    ok = True
    print(f"torch {torch.__version__}")
    print(f"{'model':10} {'impl':12} {'input':>10} {'params':>12} {'hpcnn':>12}")
    for name in MODELS:
        impls = ["auto"] + (["local"] if name.startswith("resnet") else [])
        for impl in impls:
            model, shape, used = build(name, impl=impl)
            n = param_count(model)
            want = EXPECTED_PARAMS[name]
            print(f"{name:10} {used:12} {'x'.join(map(str, shape)):>10} {n:>12,} {want:>12,}"
                  f"{'' if n == want else '  MISMATCH'}")
            ok = ok and n == want
            with torch.no_grad():  # the model runs at its size and gives 10 logits
                out = model.eval()(torch.zeros(2, *shape))
            assert tuple(out.shape) == (2, 10), (name, tuple(out.shape))
    if check_against_torchvision():
        print("local resnet18/resnet50: same parameter and buffer shapes as torchvision")
    else:
        print("torchvision not importable: resnets are the local torchvision-layout definitions")
    assert ok, "parameter counts differ from hpcnn's"
    return 0


if __name__ == "__main__":
    sys.exit(main())
