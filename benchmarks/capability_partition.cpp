// Capability partitioning of a ~1M-node random DAG with 70% supported ops (7 of 10 op kinds):
// the regions alone (op_index + region growth), and the whole property (regions + a rewrite of
// each region of 2+ nodes into one engine node). Target: under 1 s. Timed by Google Benchmark
// (gbench.hpp: repetitions, medians, JSON with --benchmark_out); the rewrite's copy of the graph
// is made and freed outside the timer.
// usage: capability_partition [--nodes N] [--check] [--regions-once] [--apply-once] [Google Benchmark flags]
//   --regions-once: the regions once, nothing else run: for counting instructions, e.g.
//   valgrind --tool=callgrind --toggle-collect='count_regions*'.
//   --apply-once: the whole property once on a copy (regions + rewrite), for
//   valgrind --tool=callgrind --toggle-collect='apply_once*'.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/capability.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

#include "gbench.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

// Out of line, so that callgrind can count what it runs (--regions-once).
__attribute__((noinline)) std::size_t count_regions(const graph& g) {
    const op_index<graph> idx(g);
    return capability_regions(idx, supported_ops<Conv, Relu, Add, Mul, Sigmoid, MaxPool, Concat>{}).size();
}

template <class Supported>
__attribute__((noinline)) std::size_t apply_once(graph& g, Supported supported) {
    auto prop = make_capability_property<graph>("engine", supported, [](const subgraph<graph>& s) {
        return s.nodes.size();
    });
    prop.min_size(2);
    return apply_property(g, prop).accepted;
}

int main(int argc, char** argv) {
    std::size_t nodes = 1'000'000;
    bool check = false, once = false, apply_one = false;
    std::vector<char*> rest{argv[0]};  // what is left for Google Benchmark
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--check")) check = true;
        else if (!std::strcmp(argv[i], "--regions-once")) once = true;
        else if (!std::strcmp(argv[i], "--apply-once")) apply_one = true;
        else rest.push_back(argv[i]);
    }
    if (check) nodes = 20'000;
    build::random_dag_options o;
    o.ops = {"Conv", "Relu", "Add", "Mul", "Sigmoid", "MaxPool", "Concat", "TopK", "NonZero", "Loop"};
    const graph base = build::random_dag(nodes, 42, o);
    const supported_ops<Conv, Relu, Add, Mul, Sigmoid, MaxPool, Concat> supported{};
    if (once) {
        const std::size_t n = count_regions(base);
        std::printf("regions once: %zu\n", n);
        return n == 0 ? 1 : 0;
    }
    if (apply_one) {
        graph g = base;
        const std::size_t n = apply_once(g, supported);
        std::printf("rewritten once: %zu\n", n);
        return n == 0 ? 1 : 0;
    }
    // Checked once before timing: the regions of 2+ nodes are what the property rewrites, and
    // the result is still a valid DAG (op_index checks it).
    const op_index<graph> idx(base);
    const auto rs = capability_regions(idx, supported);
    const auto multi = static_cast<std::size_t>(std::count_if(rs.begin(), rs.end(), [](auto& x) { return x.size() > 1; }));
    graph g = base;
    const std::size_t fused = apply_once(g, supported);
    const op_index<graph> checked(g);
    std::printf("graph: %zu nodes, 70%% of op kinds supported; %zu regions (%zu of 2+ nodes), %zu rewritten\n",
                base.node_count(), rs.size(), multi, fused);
    if (fused != multi || multi == 0) return 1;
    if (check) return 0;

    benchmark::RegisterBenchmark("regions", [&](benchmark::State& st) {
        for (auto _ : st) benchmark::DoNotOptimize(count_regions(base));
    })->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("regions_and_rewrite", [&](benchmark::State& st) {
        sgbench::on_fresh_copies(st, base, [&](graph& g) { return apply_once(g, supported); });
    })->Unit(benchmark::kMillisecond)->UseRealTime();
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), {});
}
