#!/usr/bin/python3
"""Peer: PyTorch FX's subgraph rewriter on a chain of conv -> batch_norm -> relu blocks.

Run with Debian's own python3 (it sees python3-torch):
    /usr/bin/python3 benchmarks/peers/fx_replace_pattern.py [--nodes 2000 4000 8000 ...] [--repeat 3]

The FX graph is built node by node with torch.fx.Graph, using the call targets and argument
layout that symbolic_trace records for the pattern (otherwise nothing matches), and
torch.fx.subgraph_rewriter.replace_pattern replaces each block with one call. Each block is
6 nodes (3 placeholders for the weight and BatchNorm statistics, 3 calls). Python's recursion
limit and the thread stack are raised: at the defaults FX fails with RecursionError on an
8k-node chain. sgmatch's side of the same measurement: partition_throughput --fx-curve.
"""
import argparse
import statistics
import sys
import threading
import time

import torch
import torch.fx
import torch.nn.functional as F
from torch.fx import subgraph_rewriter


def pattern(x, w, rm, rv):
    return torch.relu(F.batch_norm(torch.conv2d(x, w), rm, rv))


@torch.fx.wrap
def fused_conv_bn_relu(x, w, rm, rv):
    return torch.relu(F.batch_norm(torch.conv2d(x, w), rm, rv))


def replacement(x, w, rm, rv):
    return fused_conv_bn_relu(x, w, rm, rv)


def chain(blocks):
    """A chain of blocks with the traced pattern's targets and argument layout."""
    traced = torch.fx.symbolic_trace(pattern).graph
    calls = [n for n in traced.nodes if n.op == "call_function"]
    conv_t, bn_t, relu_t = (n.target for n in calls)
    bn_kwargs = dict(calls[1].kwargs)
    g = torch.fx.Graph()
    x = g.placeholder("x")
    for i in range(blocks):
        w = g.placeholder(f"w{i}")
        rm = g.placeholder(f"rm{i}")
        rv = g.placeholder(f"rv{i}")
        y = g.call_function(conv_t, (x, w))
        y = g.call_function(bn_t, (y, rm, rv), bn_kwargs)
        x = g.call_function(relu_t, (y,))
    g.output(x)
    return torch.fx.GraphModule(torch.nn.Module(), g)


def measure(nodes, repeat):
    blocks = max(1, nodes // 6)
    times = []
    matched = 0
    for _ in range(repeat):
        gm = chain(blocks)
        t = time.perf_counter()
        matched = len(subgraph_rewriter.replace_pattern(gm, pattern, replacement))
        times.append(time.perf_counter() - t)
    return blocks * 6, matched, statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="+", default=[2000, 4000, 8000, 16000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.setrecursionlimit(1_000_000)
    threading.stack_size(512 * 1024 * 1024)
    out = []

    def run():
        for n in args.nodes:
            out.append(measure(n, args.repeat))
            nodes, matched, t = out[-1]
            print(f"FX replace_pattern: {nodes:8d} nodes, {matched:6d} matches, median {t:9.3f} s, "
                  f"{nodes / t / 1e3:9.1f} k nodes/s", flush=True)

    th = threading.Thread(target=run)
    th.start()
    th.join()
    print(f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
