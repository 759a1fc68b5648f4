"""Writes tests/torch/data/small_convnet.pt: a small scripted CNN (not frozen), the model
test_torch loads through torch::jit::load. Run with Debian's python3 (python3-torch):

    /usr/bin/python3 tests/torch/make_small_model.py
"""
import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + x)


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU6(inplace=True))
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.block = Block(16)
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1), nn.Hardswish())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = self.head(self.block(x))
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


torch.manual_seed(0)
model = SmallConvNet().eval()
for m in model.modules():  # statistics that are not the identity
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5)
        m.running_var.uniform_(0.5, 1.5)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "small_convnet.pt")
torch.jit.save(torch.jit.script(model), path)
print(path, os.path.getsize(path), "bytes")
