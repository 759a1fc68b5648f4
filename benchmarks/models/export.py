"""Full-size models for the real-model benchmark (benchmarks/models/bench.py), exported by PyTorch
as a user exports them: the default torch.onnx.export of an eval() model (BatchNorm folded by the
exporter), opset 13, batch as a symbolic dim.

    /usr/bin/python3 benchmarks/models/export.py OUT_DIR [NAME ...]
        (Debian python3-torch, python3-torchvision, python3-onnx, python3-numpy)

For each model NAME it writes OUT_DIR/NAME.onnx and, for batch 1 and 8, NAME.b1.input.npy,
NAME.b1.output.npy, NAME.b8.input.npy, NAME.b8.output.npy (PyTorch's output, the oracle).
Weights are deterministic (seeded, no download); BatchNorm statistics are random, so that folding
them matters. The models are generated, never committed.

    resnet50, resnet18, mobilenet_v2   torchvision's, 224x224
    densenet121                        torchvision's: concat-heavy (dense connectivity)
    shufflenet_v2                      torchvision's x1.0: channel shuffle, chunk/Split
    encoder                            BERT-like: 2 layers, d_model 256, 4 heads, GELU, LayerNorm,
                                       sequence 128 (float embeddings in)
"""
import os
import sys

import numpy as np
import torch
from torch import nn
import torchvision


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu", batch_first=True)
        self.layers = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(256)

    def forward(self, x):
        return self.norm(self.layers(x))


def vision(make):
    def build():
        m = make(weights=None)
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                with torch.no_grad():
                    mod.running_mean.uniform_(-0.2, 0.2)
                    mod.running_var.uniform_(0.5, 1.5)
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.uniform_(-0.2, 0.2)
        return m
    return build


MODELS = {
    "resnet50": (vision(torchvision.models.resnet50), (3, 224, 224)),
    "resnet18": (vision(torchvision.models.resnet18), (3, 224, 224)),
    "mobilenet_v2": (vision(torchvision.models.mobilenet_v2), (3, 224, 224)),
    "densenet121": (vision(torchvision.models.densenet121), (3, 224, 224)),
    "shufflenet_v2": (vision(torchvision.models.shufflenet_v2_x1_0), (3, 224, 224)),
    "encoder": (Encoder, (128, 256)),
}


def main(out, names):
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    for name in names or MODELS:
        make, shape = MODELS[name]
        torch.manual_seed(0)
        model = make().eval()
        for batch in (1, 8):
            x = torch.randn(batch, *shape)
            with torch.no_grad():
                y = model(x)
            np.save(os.path.join(out, f"{name}.b{batch}.input.npy"), x.numpy().astype(np.float32))
            np.save(os.path.join(out, f"{name}.b{batch}.output.npy"), y.numpy().astype(np.float32))
        # Outside torch.no_grad(): PyTorch 1.13 takes a fast path for the encoder there that does
        # not export.
        torch.onnx.export(model, torch.randn(1, *shape), os.path.join(out, name + ".onnx"), opset_version=13,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        print("exported", name, flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
