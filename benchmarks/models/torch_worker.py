"""PyTorch's side of benchmarks/models/bench.py: one model in one process, driven over stdin.

    /usr/bin/python3 torch_worker.py NAME input.npy expected.npy THREADS [MODE [PLUGIN]]

Builds NAME as export.py does (same seed, same weights) and prepares it by MODE:
  ofi             traced, frozen and torch.jit.optimize_for_inference (the default)
  eager           the nn.Module itself, under torch.no_grad()
  sgmatch         traced with autograd on (so that PyTorch's no_grad fast paths, such as the
                  encoder layer's _transformer_encoder_layer_fwd, leave the ops they are made of
                  in the trace), frozen, then torch.ops.sgmatch.optimize(m._c, "onednn", [x])
                  through the sgmatch plugin at PLUGIN (libsgmatch_torch_plugin.so)
  sgmatch.regions the same with the "onednn.regions" backend
runs once and prints one JSON line: load_ms (build and prepare), first_run_ms, max_abs_diff
against expected.npy (and for the sgmatch modes fused_nodes: the sgmatch::run nodes made). Then
each line "K" on stdin runs K times and prints {"ms": [...]}; end of input ends the process.
"""
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import MODELS  # noqa: E402


def prepare(model, x, mode, plugin):
    if mode == "eager":
        return model, {}
    if mode == "ofi":
        return torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x))), {}
    if mode in ("sgmatch", "sgmatch.regions"):
        torch.ops.load_library(plugin)
        with torch.enable_grad():
            traced = torch.jit.trace(model, x, check_trace=False)
        m = torch.jit.freeze(traced.requires_grad_(False))
        backend = "onednn" if mode == "sgmatch" else "onednn.regions"
        torch.ops.sgmatch.optimize(m._c, backend, [x])
        fused = sum(1 for n in m.graph.nodes() if n.kind() == "sgmatch::run")
        return m, {"fused_nodes": fused}
    raise ValueError(mode)


def main(name, input_path, expect_path, threads, mode="ofi", plugin=None):
    torch.set_num_threads(int(threads))
    x = torch.from_numpy(np.load(input_path))
    want = np.load(expect_path)
    t0 = time.perf_counter()
    torch.manual_seed(0)
    model = MODELS[name][0]().eval()
    with torch.no_grad():
        fn, extra = prepare(model, x, mode, plugin)
    load_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    with torch.no_grad():
        y = fn(x).numpy()
    first_ms = (time.perf_counter() - t0) * 1e3
    diff = float(np.abs(y - want).max()) if y.shape == want.shape else None
    print(json.dumps(dict({"load_ms": load_ms, "first_run_ms": first_ms, "max_abs_diff": diff}, **extra)), flush=True)
    for line in sys.stdin:
        times = []
        with torch.no_grad():
            for _ in range(int(line)):
                t = time.perf_counter()
                fn(x)
                times.append((time.perf_counter() - t) * 1e3)
        print(json.dumps({"ms": times}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
