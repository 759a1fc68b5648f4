"""Small models with the architectures of common CNNs and transformers, exported by PyTorch the
two ways a user gets them, with PyTorch's own outputs as the oracle of tests/models/models.cpp.

    /usr/bin/python3 tests/models/make_models.py tests/models [NAME ...]   (Debian python3-torch,
                                                                     python3-onnx, python3-numpy)

For each model NAME it writes
    NAME.onnx           torch.onnx.export of the eval() model, opset 13 (BatchNorm folded)
    NAME.preserve.onnx  the same with training=PRESERVE, do_constant_folding=False (BatchNorm
                        kept, weights behind Transpose, shapes computed by Shape subgraphs)
    NAME.input.npy, NAME.output.npy   the input and PyTorch's output (float32)
Weights are deterministic (seeded); BatchNorm statistics are random, so folding them matters.
"""
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():
        b.running_mean.uniform_(-0.5, 0.5)
        b.running_var.uniform_(0.5, 1.5)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.5, 0.5)
    return b


def conv_bn(cin, cout, k, s=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), bn(cout))


class Basic(nn.Module):
    """ResNet's basic block: conv-bn-relu, conv-bn, residual add (1x1 conv-bn shortcut), relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = conv_bn(cin, cout, 3, stride)
        self.b = conv_bn(cout, cout, 3)
        self.short = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return F.relu(self.b(F.relu(self.a(x))) + self.short(x))


class ResNetTiny(nn.Module):
    """ResNet-18 shape: stem, ceil_mode max pooling, basic blocks, pooling, a flatten written as
    x.view(x.size(0), -1) (a Shape subgraph), a linear layer."""

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3)
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.blocks = nn.Sequential(Basic(8, 8, 1), Basic(8, 16, 2))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.blocks(self.pool(F.relu(self.stem(x))))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(x.view(x.size(0), -1))


class Inverted(nn.Module):
    """MobileNetV2's inverted residual: 1x1 expand, depthwise 3x3, 1x1 project, ReLU6."""

    def __init__(self, cin, cout, stride, expand=2):
        super().__init__()
        mid = cin * expand
        self.body = nn.Sequential(conv_bn(cin, mid, 1), nn.ReLU6(), conv_bn(mid, mid, 3, stride, groups=mid), nn.ReLU6(),
                                  conv_bn(mid, cout, 1))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 8, 3, 2), nn.ReLU6())
        self.blocks = nn.Sequential(Inverted(8, 8, 1), Inverted(8, 16, 2), Inverted(16, 16, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class DenseTiny(nn.Module):
    """Concat-heavy: a dense block (each layer reads the concat of all before it) and an
    inception-style block of parallel branches."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 8, 3), nn.ReLU())
        self.dense = nn.ModuleList([nn.Sequential(conv_bn(8 + 4 * i, 4, 3), nn.ReLU()) for i in range(3)])
        self.b1 = nn.Sequential(conv_bn(20, 8, 1), nn.ReLU())
        self.b2 = nn.Sequential(conv_bn(20, 6, 1), nn.ReLU(), conv_bn(6, 8, 3), nn.ReLU())
        self.b3 = nn.Sequential(nn.AvgPool2d(3, 1, 1), conv_bn(20, 8, 1), nn.ReLU())
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = self.stem(x)
        for layer in self.dense:
            x = torch.cat([x, layer(x)], 1)
        x = torch.cat([self.b1(x), self.b2(x), self.b3(x)], 1)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def channel_shuffle(x, groups):
    b, c, h, w = x.size()
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    """ShuffleNetV2's unit: split in two (chunk), one half through 1x1, depthwise 3x3, 1x1,
    concat, channel shuffle (Reshape, Transpose, Reshape)."""

    def __init__(self, c):
        super().__init__()
        h = c // 2
        self.branch = nn.Sequential(conv_bn(h, h, 1), nn.ReLU(), conv_bn(h, h, 3, groups=h), conv_bn(h, h, 1), nn.ReLU())

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat([a, self.branch(b)], 1), 2)


class ShuffleTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 16, 3, 2), nn.ReLU())
        self.units = nn.Sequential(ShuffleUnit(16), ShuffleUnit(16))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.units(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class UNetTiny(nn.Module):
    """Encoder-decoder (U-Net / FPN shape): downsampling by max pooling and a strided conv,
    upsampling by F.interpolate (nearest, and bilinear as PyTorch exports it: Resize with
    pytorch_half_pixel), skip connections joined by concat and by add."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(conv_bn(3, 8, 3), nn.ReLU())
        self.enc2 = nn.Sequential(conv_bn(8, 16, 3), nn.ReLU())
        self.enc3 = nn.Sequential(conv_bn(16, 16, 3, 2), nn.ReLU())
        self.dec2 = nn.Sequential(conv_bn(32, 8, 3), nn.ReLU())
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(e2)
        d2 = self.dec2(torch.cat([e2, F.interpolate(e3, scale_factor=2.0, mode="nearest")], 1))
        d1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False) + e1
        return self.head(d1)


class EncoderTiny(nn.Module):
    """A transformer encoder: one layer of multi-head attention (4 heads), GELU feed-forward,
    LayerNorm, on a sequence of 16 vectors of 32."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True)
        self.norm = nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(self.layer(x))


class RecurrentTiny(nn.Module):
    """A sequence model: a two-layer bidirectional LSTM, a GRU (exported with
    linear_before_reset 1), an Elman RNN (tanh) whose last hidden state is added to a linear
    head on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 6, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(12, 4)
        self.rnn = nn.RNN(4, 3)
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        y, h = self.rnn(y)
        return self.fc(y) + self.fc(h)


MODELS = {
    "resnet_tiny": (ResNetTiny, (1, 3, 32, 32)),
    "mobile_tiny": (MobileTiny, (1, 3, 32, 32)),
    "dense_tiny": (DenseTiny, (1, 3, 16, 16)),
    "shuffle_tiny": (ShuffleTiny, (1, 3, 32, 32)),
    "encoder_tiny": (EncoderTiny, (1, 16, 32)),
    "unet_tiny": (UNetTiny, (1, 3, 16, 16)),
    "recurrent_tiny": (RecurrentTiny, (7, 2, 5)),
}


def main(out, names):
    os.makedirs(out, exist_ok=True)
    for name in names or MODELS:
        make, shape = MODELS[name]
        torch.manual_seed(0)
        model = make().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(out, name + ".input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(out, name + ".output.npy"), y.numpy().astype(np.float32))
        # Outside torch.no_grad(): PyTorch 1.13 takes a fast path for the encoder there that does
        # not export.
        torch.onnx.export(model, x, os.path.join(out, name + ".onnx"), opset_version=13,
                          input_names=["input"], output_names=["output"])
        torch.onnx.export(model, x, os.path.join(out, name + ".preserve.onnx"), opset_version=13,
                          input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), sys.argv[2:])
