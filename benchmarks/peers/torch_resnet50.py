#!/usr/bin/python3
"""PyTorch peer for benchmarks/resnet50.cpp: torchvision's ResNet-50 (random weights), fp32,
frozen and optimized for inference (torch.jit.optimize_for_inference: BN folded, oneDNN
blocked layouts, no post-op fusion), batch 1 and 8 at 224x224, the machine's threads.

Run with Debian's python3 (python3-torch, python3-torchvision), not part of the test command:

    /usr/bin/python3 benchmarks/peers/torch_resnet50.py [--rounds 7] [--batch 1 8]

Prints the median ms per batch of interleaved rounds after warm-up, and GFLOP/s at 8.18 GFLOP
per image.
"""
import argparse
import os
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count())  # Debian's torch starts with 1 here
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    print("torch", torch.__version__, "threads", torch.get_num_threads(), "mkldnn", torch.backends.mkldnn.is_available())
    runs = {}
    with torch.no_grad():
        for b in a.batch:
            x = torch.rand(b, 3, 224, 224)
            m = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x)))
            for _ in range(3):
                m(x)
            runs[b] = (m, x)
        times = {b: [] for b in a.batch}
        for r in range(a.rounds):
            order = a.batch[r % len(a.batch):] + a.batch[:r % len(a.batch)]
            for b in order:
                m, x = runs[b]
                t0 = time.perf_counter()
                m(x)
                times[b].append((time.perf_counter() - t0) * 1e3)
    print("| batch | torch ms | GFLOP/s |")
    print("|---|---|---|")
    for b in a.batch:
        ms = statistics.median(times[b])
        print("| %d | %.1f | %.0f |" % (b, ms, 8.18 * b / (ms / 1e3)))


if __name__ == "__main__":
    main()
