#!/usr/bin/python3
"""Compile-time costs of sgmatch, measured with the compiler itself.

  1. an empty TU vs a TU that includes sgmatch/sgmatch.hpp (and each public header alone)
  2. a TU defining 20 patterns and running them over a graph, at -O2
  3. a sweep over chain length 4..128: one pattern of that length, matched with find_all

Each TU is compiled REPEAT times, variants interleaved, and the median wall time is reported.
usage: benchmarks/compile/run.py [--cxx g++] [--repeat 3] [--std 17]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "include")


def twenty_patterns():
    pats = [
        "op<Conv>() >> op<BatchNorm>() >> op<Relu>()",
        "op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>()",
        "op<Conv>() >> op<BatchNorm>()",
        "op<Conv>() >> optional(op<BatchNorm>()) >> repeat<0, 3>(op<Relu>() | op<Clip>() | op<Sigmoid>())",
        "op<ConvTranspose>() >> optional(op<Add>(constant())) >> repeat<0, 3>(op<Relu>() | op<Tanh>())",
        "op<MatMul>() >> op<Add>(constant()) >> op<Relu>()",
        "op<Gemm>() >> optional(op<Relu>())",
        "op<Div>(any().as<x>(), constant(1.4142135, 1e-4)) >> op<Erf>() >> op<Add>(constant(1.0)) >> op<Mul>(ref<x>()) >> op<Mul>(constant(0.5))",
        "op<Mul>(any().as<x>(), op<Sigmoid>(ref<x>()))",
        "op<BatchNorm>() >> op<Relu>()",
        "op<Conv>().where(pred::attr_ints_eq(\"kernel_shape\", 1, 1)) >> op<Conv>().where(pred::attr_eq(\"group\", 64))",
        "op<Conv>().as<y>() >> op<Relu>() >> op<Add>(ref<y>())",
        "op<Pad>() >> op<Conv>()",
        "op<Conv>() >> op<Clip>()",
        "op<Conv>() >> op<LeakyRelu>()",
        "op<Conv>() >> op<Elu>()",
        "op<MatMul>() >> op<Gelu>()",
        "op<Conv>() >> op<HardSwish>()",
        "op<Conv>() >> op<Mish>() >> op<Add>(any())",
        "(op<Conv>() >> op<Relu>()) | (op<MatMul>() >> op<Relu>())",
    ]
    body = "\n".join(
        f"    {{ constexpr auto p = {p}; total += find_all(idx, p).size(); }}" for p in pats)
    return f"""#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
using namespace sgmatch::ops;
struct x; struct y;
int main() {{
    const graph g = build::resnet50();
    const op_index<graph> idx(g);
    std::size_t total = 0;
{body}
    return static_cast<int>(total % 7);
}}
"""


def chain_of(n):
    p = " >> ".join(["op<Relu>()"] * n)
    return f"""#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
using namespace sgmatch::ops;
int main() {{
    graph g;
    auto x = g.add_input("x");
    for (int i = 0; i < {n}; ++i) x = g.add_op("Relu", "r" + std::to_string(i), {{x}});
    constexpr auto p = {p};
    return static_cast<int>(find_all(g, p).size());
}}
"""


def compile_time(cxx, std, src_path, opt):
    t = time.perf_counter()
    subprocess.run([cxx, f"-std=c++{std}", opt, "-I", INCLUDE, "-c", src_path, "-o", os.devnull], check=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--std", default="17")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sgmatch-compile-")
    cases = {}

    def add(name, text, opt="-O2"):
        path = os.path.join(tmp, name.replace("/", "_").replace(" ", "_") + ".cpp")
        with open(path, "w") as f:
            f.write(text)
        cases[name] = (path, opt)

    add("empty TU", "int main() { return 0; }\n")
    add("#include <sgmatch/sgmatch.hpp>", "#include <sgmatch/sgmatch.hpp>\nint main() { return 0; }\n")
    for dirpath, _, files in sorted(os.walk(os.path.join(INCLUDE, "sgmatch"))):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, f), INCLUDE)
            if rel != "sgmatch/sgmatch.hpp" and "/detail/" not in rel:
                add(f"#include <{rel}>", f"#include <{rel}>\nint main() {{ return 0; }}\n")
    add("ResNet-50 graph + op_index, no pattern, -O2", """#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"
int main() {
    const sgmatch::graph g = sgmatch::build::resnet50();
    const sgmatch::op_index<sgmatch::graph> idx(g);
    return static_cast<int>(idx.order().size() % 7);
}
""")
    add("20 patterns over ResNet-50, -O2", twenty_patterns())
    lengths = [4, 8, 16, 32, 64, 128]
    for n in lengths:
        add(f"chain of {n}, -O2", chain_of(n))

    times = {name: [] for name in cases}
    for _ in range(args.repeat):  # interleaved: every case once per round
        for name, (path, opt) in cases.items():
            times[name].append(compile_time(args.cxx, args.std, path, opt))
    med = {name: statistics.median(v) for name, v in times.items()}

    print(f"compiler: {subprocess.run([args.cxx, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print(f"C++{args.std}, median of {args.repeat} interleaved runs (seconds)\n")
    print("| TU | median s | over empty TU |")
    print("|---|---|---|")
    base = med["empty TU"]
    for name in cases:
        print(f"| {name} | {med[name]:.2f} | {med[name] - base:+.2f} |")
    per = [(med[f'chain of {n}, -O2'] - med['chain of 4, -O2']) / (n - 4) for n in lengths[1:]]
    print("\nchain sweep, marginal seconds per added element (4 -> n): " +
          ", ".join(f"n={n}: {p * 1000:.1f} ms" for n, p in zip(lengths[1:], per)))


if __name__ == "__main__":
    main()
