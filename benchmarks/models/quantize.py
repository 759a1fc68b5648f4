"""The int8 models of the real-model benchmark: each f32 model that export.py wrote, quantized by
sgmatch-run (static, QDQ: u8 activations, s8 weights per channel, int32 bias) from calibration
inputs drawn as export.py draws the benchmark's inputs (standard normal) but from another seed.

    /usr/bin/python3 benchmarks/models/quantize.py --models build/models \
        --sgmatch-run build/test/examples/sgmatch-run [--sets 8] [--method minmax|percentile] [NAME ...]

For each model NAME it writes OUT/NAME.calibration/K.npy (K < sets, batch 1) and OUT/NAME.int8.onnx,
which bench.py runs as the engines sgmatch.int8 and ort.int8 (both read the same file).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import ALL_MODELS, read_npy  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--sgmatch-run", required=True)
    ap.add_argument("--sets", type=int, default=8)
    ap.add_argument("--method", default="minmax", choices=["minmax", "percentile"])
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    rng = np.random.default_rng(2026)
    for name in a.names or ALL_MODELS:
        shape, _ = read_npy(os.path.join(a.models, f"{name}.b1.input.npy"))
        calib = os.path.join(a.models, f"{name}.calibration")
        os.makedirs(calib, exist_ok=True)
        for k in range(a.sets):
            np.save(os.path.join(calib, f"{k:03d}.npy"), rng.standard_normal(shape).astype(np.float32))
        out = os.path.join(a.models, f"{name}.int8.onnx")
        subprocess.run([a.sgmatch_run, os.path.join(a.models, f"{name}.onnx"), "--quantize", "int8", "--calibrate", calib,
                        "--calibration", a.method, "--batch", "1", "--save", out], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
