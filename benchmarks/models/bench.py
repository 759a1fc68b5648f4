"""Real models: sgmatch against ONNX Runtime and PyTorch, interleaved in the same minutes.

    /usr/bin/python3 benchmarks/models/export.py build/models
    npm install --prefix build/models/peers --onnxruntime-node-install=skip onnxruntime-node@1.30.0
    /usr/bin/python3 benchmarks/models/bench.py --models build/models \
        --worker build/test/benchmarks/sgmatch_worker --node-modules build/models/peers/node_modules

Every engine is a worker process that loads the model once and then runs it when asked
(sgmatch_worker.cpp, ort_worker.js, torch_worker.py). For each model and batch, the model and
data files are read once (so that no engine pays for a cold page cache), then every engine's
worker is started --starts times, the order rotating each time (load and first-run time: the
median of the starts; the workers of the last start stay), then each round asks
every worker in turn (the order rotating) for --iters runs; an engine's time is the median over
the rounds of its per-round medians. Around each request the script reads /proc/stat and the
worker's own CPU time, and reports the share of the machine that everything else used while it
ran (a noisy minute shows there). Every engine's first output is compared with PyTorch's.

Engines: sgmatch (backend onednn), sgmatch.regions (onednn.regions), sgmatch.unfused (one oneDNN
primitive per op), ort (ONNX Runtime 1.30, CPU, graphOptimizationLevel all), torch (PyTorch
torch.jit.optimize_for_inference). An engine name with .int8 appended (sgmatch.int8, ort.int8)
runs NAME.int8.onnx, the QDQ model quantize.py wrote, in the same rounds; its output is checked
against PyTorch's f32 one within 10% of the largest value (the relative error is reported). With --torch-plugin, also torch.eager (the nn.Module), and
torch.sgmatch / torch.sgmatch.regions: the model scripted, frozen and optimized in PyTorch by the
sgmatch plugin (sgmatch inside TorchScript); name them with --engines. --smoke runs the sgmatch engines on a committed small model,
one round, and fails on a wrong output (the test preset runs it; no timing is asserted).
"""
import argparse
import array
import ast
import json
import multiprocessing
import os
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODELS = ["resnet50", "resnet18", "mobilenet_v2", "densenet121", "shufflenet_v2", "encoder"]
ALL_ENGINES = ["sgmatch", "sgmatch.regions", "sgmatch.unfused", "ort", "torch"]
# PyTorch hosting sgmatch (--torch-plugin): eager PyTorch, and scripted modules optimized by the
# sgmatch plugin; "torch" is PyTorch's own freeze + optimize_for_inference.
TORCH_ENGINES = ["torch", "torch.eager", "torch.sgmatch", "torch.sgmatch.regions"]


def read_npy(path):
    """A float32 .npy file as (shape, array('f')), without numpy."""
    with open(path, "rb") as f:
        b = f.read()
    if b[1:6] != b"NUMPY":
        raise ValueError(path + ": not a .npy file")
    hlen, start = (struct.unpack_from("<H", b, 8)[0], 10) if b[6] == 1 else (struct.unpack_from("<I", b, 8)[0], 12)
    header = ast.literal_eval(b[start:start + hlen].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(path + ": only little-endian float32 in C order is read")
    data = array.array("f")
    data.frombytes(b[start + hlen:])
    return header["shape"], data


def cpu_jiffies():
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def proc_jiffies(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    v = s[s.rindex(")") + 2:].split()
    return int(v[11]) + int(v[12])  # utime + stime, every thread


def _spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def wake(threads, seconds=0.3):
    """Keeps `threads` CPUs busy for a moment before a worker starts: on a virtual machine an idle
    vCPU's first burst runs slow (a first run timed at once took 7.7 ms, after 5 s idle 21-27 ms),
    and load and first run are timed. Every engine gets the same."""
    ps = [multiprocessing.Process(target=_spin, args=(seconds,)) for _ in range(threads)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()


class Worker:
    def __init__(self, engine, cmd, env):
        self.engine = engine
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env)
        self.start = self._reply()
        self.round_medians, self.busy_other, self.total = [], 0, 0

    def _reply(self):
        line = self.p.stdout.readline()
        if not line:
            err = self.p.stderr.read()
            raise RuntimeError(f"{self.engine} worker stopped: {err.strip()[-2000:]}")
        return json.loads(line)

    def run(self, k):
        b0, t0 = cpu_jiffies()
        w0 = proc_jiffies(self.p.pid)
        self.p.stdin.write(f"{k}\n")
        self.p.stdin.flush()
        ms = self._reply()["ms"]
        b1, t1 = cpu_jiffies()
        w1 = proc_jiffies(self.p.pid)
        self.busy_other += max(0, (b1 - b0) - (w1 - w0))
        self.total += t1 - t0
        return ms

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def files(models, name, batch, variant=""):
    for stem in (f"{name}.b{batch}", name):
        i, o = os.path.join(models, stem + ".input.npy"), os.path.join(models, stem + ".output.npy")
        if os.path.exists(i) and os.path.exists(o):
            return os.path.join(models, name + (f".{variant}" if variant else "") + ".onnx"), i, o
    raise FileNotFoundError(f"{models}: no input/output .npy for {name} at batch {batch}")


def command(a, engine, name, batch):
    # An engine named X.int8 runs NAME.int8.onnx (quantize.py wrote it) as engine X runs NAME.onnx.
    int8 = engine.endswith(".int8")
    if int8:
        engine = engine[: -len(".int8")]
    model, inp, exp = files(a.models, name, batch, "int8" if int8 else "")
    t = str(a.threads)
    if engine.startswith("sgmatch"):
        backend = {"sgmatch": "onednn", "sgmatch.regions": "onednn.regions", "sgmatch.unfused": "none"}[engine]
        return [a.worker, model, backend, str(batch), inp, exp, t]
    if engine == "ort":
        return ["node", os.path.join(HERE, "ort_worker.js"), model, inp, exp, t]
    if engine == "torch":
        return ["/usr/bin/python3", os.path.join(HERE, "torch_worker.py"), name, inp, exp, t]
    if engine.startswith("torch."):
        mode = engine[len("torch."):]
        return ["/usr/bin/python3", os.path.join(HERE, "torch_worker.py"), name, inp, exp, t, mode,
                os.path.abspath(a.torch_plugin or "")]
    raise ValueError(engine)


def warm(paths):
    """Reads each file once: every engine then starts from the same, warm, page cache."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def bench(a, name, batch):
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if a.node_modules:
        env["NODE_PATH"] = os.path.abspath(a.node_modules)
    paths = files(a.models, name, batch)
    _, want = read_npy(paths[2])
    scale = max(abs(v) for v in want)
    warm(paths)
    workers = []
    starts = {e: [] for e in a.engines}
    try:
        n = len(a.engines)
        for s in range(a.starts):
            for i in range(n):
                e = a.engines[(i + s) % n]
                wake(a.threads)
                w = Worker(e, command(a, e, name, batch), env)
                starts[e].append(w.start)
                if s + 1 < a.starts:
                    w.close()
                else:
                    workers.append(w)
        for w in workers:
            w.run(1)  # warm-up, untimed
        for r in range(a.rounds):
            for i in range(len(workers)):
                w = workers[(i + r) % len(workers)]
                w.round_medians.append(statistics.median(w.run(a.iters)))
                time.sleep(0.05)  # let the last worker's spinning threads go to sleep
    finally:
        for w in workers:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - a dead worker has said why already
                w.p.kill()
    rows = {}
    for w in workers:
        d = w.start.get("max_abs_diff")
        # The same rule for every engine; an int8 model against PyTorch's f32 output: within 10%
        # of the output's largest value (the error is reported; the weights are random).
        ok = d is not None and d <= (0.1 * scale if w.engine.endswith(".int8") else 1e-4 + 1e-3 * scale)
        rows[w.engine] = {
            "ms": statistics.median(w.round_medians),
            "load_ms": statistics.median(s["load_ms"] for s in starts[w.engine]),
            "first_run_ms": statistics.median(s["first_run_ms"] for s in starts[w.engine]), "max_abs_diff": d, "ok": ok,
            "others_cpu": w.busy_other / w.total if w.total else 0.0,
            "fused_nodes": w.start.get("fused_nodes"), "fallbacks": w.start.get("fallbacks"),
            "relative_error": d / scale if d is not None and scale else None,
        }
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder of NAME.onnx, NAME.bB.input.npy, NAME.bB.output.npy")
    ap.add_argument("--names", nargs="*", default=None)
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 8])
    ap.add_argument("--engines", nargs="*", default=ALL_ENGINES)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--iters", type=int, default=3, help="runs per worker per round")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--starts", type=int, default=3, help="worker starts per engine (load and first run: their median)")
    ap.add_argument("--worker", required=True, help="the sgmatch_worker executable")
    ap.add_argument("--node-modules", default=None, help="node_modules holding onnxruntime-node")
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--torch-plugin", default=None,
                    help="libsgmatch_torch_plugin.so: makes the torch.sgmatch engines available (--engines ...)")
    ap.add_argument("--smoke", action="store_true", help="resnet_tiny, sgmatch engines, batch 1, one round")

    a = ap.parse_args()
    if a.smoke:
        a.names, a.batches, a.rounds, a.iters, a.starts = ["resnet_tiny"], [1], 1, 1, 1
        a.engines = [e for e in ALL_ENGINES if e.startswith("sgmatch")]
    names = a.names or ALL_MODELS
    results, bad = {}, []
    for name in names:
        for batch in a.batches:
            rows = bench(a, name, batch)
            results[f"{name}/b{batch}"] = rows
            base_name = "ort" if "ort" in rows else "torch"  # the ratio's denominator
            base = rows.get(base_name)
            print(f"\n{name}, batch {batch}")
            print(f"  {'engine':22} {'median ms':>10} {'/ ' + base_name:>8} {'load ms':>9} {'first ms':>9} {'max|diff|':>10} {'rel':>8} {'others':>7}")
            for e, r in rows.items():
                ratio = f"{r['ms'] / base['ms']:.2f}" if base else "-"
                diff = "n/a" if r["max_abs_diff"] is None else f"{r['max_abs_diff']:.2g}"
                rel = "n/a" if r["relative_error"] is None else f"{r['relative_error']:.2g}"
                print(f"  {e:22} {r['ms']:10.2f} {ratio:>8} {r['load_ms']:9.0f} {r['first_run_ms']:9.1f} "
                      f"{diff:>10}{'' if r['ok'] else '!'} {rel:>8} {100 * r['others_cpu']:6.0f}%")
                if not r["ok"]:
                    bad.append(f"{name} b{batch} {e}")
            if "sgmatch" in rows and "sgmatch.unfused" in rows:
                print(f"  fused / unfused: {rows['sgmatch']['ms'] / rows['sgmatch.unfused']['ms']:.2f}")
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if bad:
        print("\nwrong output (beyond 1e-4 + 1e-3 * max|expected|): " + ", ".join(bad))
        return 1
    print("\nevery output matches PyTorch's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
