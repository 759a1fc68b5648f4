#!/usr/bin/python3
"""Compile-time costs of sgmatch, measured with the compiler itself.

  1. an empty TU vs a TU that includes sgmatch/sgmatch.hpp (and each public header alone)
  2. a TU defining 20 patterns and running them over a graph, at -O2
  3. a sweep over chain length 4..128: one pattern of that length, matched with find_all

Each TU is compiled REPEAT times, variants interleaved, and the median wall time is reported.
With --baseline DIR (another checkout, e.g. a `git worktree` of an older commit), every TU is also
compiled against DIR/include, alternately with this tree, and the table shows both and their ratio.
usage: benchmarks/compile/run.py [--cxx g++] [--repeat 3] [--std 17] [--only NAME] [--baseline DIR]
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "include")


def patterns_tu(count=20):
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
        f"    {{ constexpr auto p = {p}; total += find_all(idx, p).size(); }}" for p in pats[:count])
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


ONEDNN_TU = """#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/sgmatch.hpp"
bool registered = sgmatch::onednn::register_backend<sgmatch::graph>();
int main() { return registered ? 0 : 1; }
"""

# The same TU in a program built with SGMATCH_SEPARATE_COMPILATION (onednn/register.hpp): it
# declares the backend, and one other TU of the program compiles it (ONEDNN_SRC_TU).
ONEDNN_SEPARATE_TU = "#define SGMATCH_SEPARATE_COMPILATION\n" + ONEDNN_TU.replace("onednn/backend.hpp", "onednn/register.hpp")
ONEDNN_SRC_TU = """#define SGMATCH_SEPARATE_COMPILATION
#include "sgmatch/onednn/src.hpp"
"""


# A user's first custom fusion: an own graph type (examples/minifw's, through its adapter), two
# fused properties written for it, applied, and sgmatch's executor over the graph. Separately
# compiled, the program declares the lowering for its graph type extern (and compiles it in its
# one src TU, USER_SRC_TU), as onednn/property.hpp says.
USER_TU = """#include <cstdio>
#include "minifw/adapter.hpp"
#include "sgmatch/exec/graph_executor.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#if defined(SGMATCH_SEPARATE_COMPILATION)
SGMATCH_ONEDNN_EXTERN_LOWERING(minifw_view);
#endif
using namespace sgmatch;
struct cv;
int main() {
    minifw::Graph fw;
    auto* x = fw.variable("data");
    auto* w = fw.variable("w", std::make_shared<const minifw::Tensor>(minifw::Tensor::zeros({8, 3, 3, 3})));
    auto* c = fw.op("Convolution", "conv", {{x, 0}, {w, 0}}, {{"kernel", "(3, 3)"}, {"num_filter", "8"}});
    fw.outputs.push_back({fw.op("Activation", "relu", {{c, 0}}, {{"act_type", "relu"}}), 0});
    minifw_view view(fw, nullptr);
    auto silu = onednn::make_fused_property<minifw_view>("conv_silu", op<ops::Conv>().as<cv>() >> op<ops::Sigmoid>() >> op<ops::Mul>(ref<cv>()));
    auto mm = onednn::make_fused_property<minifw_view>("matmul_add_relu", op<ops::MatMul>() >> op<ops::Add>(constant()) >> op<ops::Relu>());
    apply_property(view, silu);
    apply_property(view, mm);
    const exec::graph_executor<minifw_view> run(view, exec::mode::onednn);
    std::printf("%zu\\n", run.input_names().size());
}
"""
USER_SEPARATE_TU = "#define SGMATCH_SEPARATE_COMPILATION\n" + USER_TU
USER_SRC_TU = """#define SGMATCH_SEPARATE_COMPILATION
#include "minifw/adapter.hpp"
#include "sgmatch/exec/src.hpp"
#include "sgmatch/onednn/src.hpp"
SGMATCH_ONEDNN_INSTANTIATE_LOWERING(minifw_view);
"""
# What a program's TU that builds sgmatch's executor over the built-in graph pays.
EXECUTOR_TU = """#include "sgmatch/exec/graph_executor.hpp"
#include "sgmatch/graph/builders.hpp"
int main() {
    const sgmatch::graph g = sgmatch::build::resnet50(1, 32, 1);
    const sgmatch::exec::graph_executor<sgmatch::graph> run(g, sgmatch::exec::mode::onednn);
    return static_cast<int>(run.input_names().size());
}
"""
EXECUTOR_SEPARATE_TU = "#define SGMATCH_SEPARATE_COMPILATION\n" + EXECUTOR_TU
EXEC_SRC_TU = """#define SGMATCH_SEPARATE_COMPILATION
#include "sgmatch/exec/src.hpp"
"""


def compile_time(cxx, std, src_path, opt, include=INCLUDE):
    """Wall seconds and CPU seconds (user + sys of the compiler) of one compile. On a shared,
    noisy machine the CPU time is the steadier of the two."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # (the ONNX part's headers need the two macros its pkg-config file carries)
    subprocess.run([cxx, f"-std=c++{std}", opt, "-DONNX_ML=1", "-DONNX_NAMESPACE=onnx", "-I", include, "-I",
                    os.path.join(os.path.dirname(include), "examples"), "-c", src_path, "-o", os.devnull], check=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--std", default="17")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", action="append", default=[],
                    help="run only the TUs whose name contains this (repeatable; the empty TU always runs)")
    ap.add_argument("--baseline", help="a checkout to compile each TU against too, alternately")
    args = ap.parse_args()
    if args.baseline:
        return compare(args)
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
            # a part's src.hpp is a separately compiled program's TU (timed below), not a header
            if rel != "sgmatch/sgmatch.hpp" and not rel.endswith("/src.hpp") and rel.endswith(".hpp") and "/detail/" not in rel:
                add(f"#include <{rel}>", f"#include <{rel}>\nint main() {{ return 0; }}\n")
    add("ResNet-50 graph + op_index, no pattern, -O2", """#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"
int main() {
    const sgmatch::graph g = sgmatch::build::resnet50();
    const sgmatch::op_index<sgmatch::graph> idx(g);
    return static_cast<int>(idx.order().size() % 7);
}
""")
    add("1 pattern over ResNet-50, -O2", patterns_tu(1))
    add("20 patterns over ResNet-50, -O2", patterns_tu(20))
    lengths = [4, 8, 16, 32, 64, 128]
    for n in lengths:
        add(f"chain of {n}, -O2", chain_of(n))
    # What a framework's .cpp pays to switch the ready-made oneDNN backend on for its graph type.
    add("onednn backend registered for the built-in graph, -O2", ONEDNN_TU)
    add("onednn backend registered, separately compiled (SGMATCH_SEPARATE_COMPILATION), -O2", ONEDNN_SEPARATE_TU)
    add("onednn backend compiled once (onednn/src.hpp), -O2", ONEDNN_SRC_TU)
    add("graph_executor<graph> over ResNet-50, -O2", EXECUTOR_TU)
    add("graph_executor<graph> over ResNet-50, separately compiled, -O2", EXECUTOR_SEPARATE_TU)
    add("user TU: 2 fused properties + graph_executor over an own graph, -O2", USER_TU)
    add("user TU: 2 fused properties + graph_executor over an own graph, separately compiled, -O2", USER_SEPARATE_TU)
    add("user program's src TU: exec/src.hpp + onednn/src.hpp + its graph's lowering, -O2", USER_SRC_TU)
    if args.only:
        for name in list(cases):
            if name != "empty TU" and not any(o in name for o in args.only):
                del cases[name]

    times = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for _ in range(args.repeat):  # interleaved: every case once per round
        for name, (path, opt) in cases.items():
            w, c = compile_time(args.cxx, args.std, path, opt)
            times[name].append(w)
            cpu[name].append(c)
    med = {name: statistics.median(v) for name, v in times.items()}
    mcpu = {name: statistics.median(v) for name, v in cpu.items()}

    print(f"compiler: {subprocess.run([args.cxx, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print(f"C++{args.std}, median of {args.repeat} interleaved runs (seconds)\n")
    print("| TU | median wall s | over empty TU | median CPU s (user+sys) |")
    print("|---|---|---|---|")
    base = med["empty TU"]
    for name in cases:
        print(f"| {name} | {med[name]:.2f} | {med[name] - base:+.2f} | {mcpu[name]:.2f} |")
    keys = ("ResNet-50 graph + op_index, no pattern, -O2", "1 pattern over ResNet-50, -O2",
            "20 patterns over ResNet-50, -O2")
    if all(k in mcpu for k in keys):
        p0, p1, p20 = (mcpu[k] for k in keys)
        print(f"\npatterns (CPU): the first costs {p1 - p0:.2f} s (the engine, once per graph type), "
              f"each further one {(p20 - p1) / 19:.3f} s")
    if all(f"chain of {n}, -O2" in mcpu for n in lengths):
        per = [(mcpu[f'chain of {n}, -O2'] - mcpu['chain of 4, -O2']) / (n - 4) for n in lengths[1:]]
        print("chain sweep (CPU), marginal seconds per added element (4 -> n): " +
              ", ".join(f"n={n}: {p * 1000:.1f} ms" for n, p in zip(lengths[1:], per)))

def compare(args):
    """Each TU against this tree and against the baseline checkout, alternately, in one run. A case
    given as (this tree's text, the baseline's text) compares two ways of doing the same thing (the
    baseline has no separate compilation: its backend TU is compared with this tree's two)."""
    base_include = os.path.join(os.path.abspath(args.baseline), "include")
    tmp = tempfile.mkdtemp(prefix="sgmatch-compile-")
    cases = {}
    for name, text in [
        ("#include <sgmatch/sgmatch.hpp>", "#include <sgmatch/sgmatch.hpp>\nint main() { return 0; }\n"),
        ("1 pattern over ResNet-50, -O2", patterns_tu(1)),
        ("20 patterns over ResNet-50, -O2", patterns_tu(20)),
        ("chain of 64, -O2", chain_of(64)),
        ("onednn backend registered for the built-in graph, -O2", ONEDNN_TU),
        ("onednn backend registered, separately compiled (baseline: the backend TU), -O2", (ONEDNN_SEPARATE_TU, ONEDNN_TU)),
        ("onednn backend compiled once, onednn/src.hpp (baseline: the backend TU), -O2", (ONEDNN_SRC_TU, ONEDNN_TU)),
        ("onednn backend compiled once, onednn/src.hpp, -O2", ONEDNN_SRC_TU),
        ("graph_executor<graph> over ResNet-50, -O2", EXECUTOR_TU),
        ("graph_executor<graph> over ResNet-50, separately compiled, -O2", EXECUTOR_SEPARATE_TU),
        ("the executor compiled once, exec/src.hpp, -O2", EXEC_SRC_TU),
        ("user TU: 2 fused properties + graph_executor over an own graph, -O2", USER_TU),
        ("the same user TU, separately compiled (baseline: header-only), -O2", (USER_SEPARATE_TU, USER_TU)),
        ("user TU, separately compiled on both sides, -O2", USER_SEPARATE_TU),
        ("its program's src TU (baseline: the header-only user TU), -O2", (USER_SRC_TU, USER_TU)),
    ]:
        if args.only and not any(o in name for o in args.only):
            continue
        texts = text if isinstance(text, tuple) else (text, text)
        paths = []
        for side, t in zip(("this", "base"), texts):
            paths.append(os.path.join(tmp, f"case{len(cases)}_{side}.cpp"))
            with open(paths[-1], "w") as f:
                f.write(t)
        cases[name] = paths
    cpu = {(name, side): [] for name in cases for side in ("this", "base")}
    for r in range(args.repeat):
        done = {}  # (side, text) -> this round's time: a baseline text several cases share compiles once a round
        for name, (this_path, base_path) in cases.items():
            sides = [("this", INCLUDE, this_path), ("base", base_include, base_path)]
            if r % 2:
                sides.reverse()
            for side, inc, path in sides:
                with open(path) as f:
                    key = (side, f.read())
                if key not in done:
                    done[key] = compile_time(args.cxx, args.std, path, "-O2", inc)[1]
                cpu[(name, side)].append(done[key])
    print(f"compiler: {subprocess.run([args.cxx, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print(f"C++{args.std}, this tree vs {args.baseline}, median CPU s (user+sys) of {args.repeat} alternating runs\n")
    print("| TU | this tree | baseline | ratio |")
    print("|---|---|---|---|")
    for name in cases:
        a = statistics.median(cpu[(name, "this")])
        b = statistics.median(cpu[(name, "base")])
        print(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
