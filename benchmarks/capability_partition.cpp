// Capability partitioning of a ~1M-node random DAG with 70% supported ops (7 of 10 op kinds):
// the regions alone (op_index + region growth), and the whole property (regions + a rewrite of
// each region of 2+ nodes into one engine node). Target: under 1 s.
// usage: capability_partition [--nodes N] [--rounds R] [--check] [--regions-once] [--apply-once]
//   --regions-once: the regions once, nothing else run: for counting instructions, e.g.
//   valgrind --tool=callgrind --toggle-collect='count_regions*'.
//   --apply-once: the whole property once on a copy (regions + rewrite), for
//   valgrind --tool=callgrind --toggle-collect='apply_once*'.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/capability.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using clk = std::chrono::steady_clock;

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
    int rounds = 3;
    bool check = false, once = false, apply_one = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--check")) check = true;
        else if (!std::strcmp(argv[i], "--regions-once")) once = true;
        else if (!std::strcmp(argv[i], "--apply-once")) apply_one = true;
    }
    if (check) {
        nodes = 20'000;
        rounds = 1;
    }
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
    std::vector<double> t_regions, t_apply;
    std::size_t regions = 0, multi = 0, fused = 0;
    for (int r = 0; r < rounds; ++r) {
        {
            const auto a = clk::now();
            const op_index<graph> idx(base);
            const auto rs = capability_regions(idx, supported);
            t_regions.push_back(std::chrono::duration<double>(clk::now() - a).count());
            regions = rs.size();
            multi = static_cast<std::size_t>(std::count_if(rs.begin(), rs.end(), [](auto& x) { return x.size() > 1; }));
        }
        {
            graph g = base;  // copy outside the timed region
            const auto a = clk::now();
            fused = apply_once(g, supported);
            t_apply.push_back(std::chrono::duration<double>(clk::now() - a).count());
            const op_index<graph> checked(g);  // still a valid DAG
        }
    }
    std::sort(t_regions.begin(), t_regions.end());
    std::sort(t_apply.begin(), t_apply.end());
    std::printf("graph: %zu nodes, 70%% of op kinds supported; %zu regions (%zu of 2+ nodes), %zu rewritten\n",
                base.node_count(), regions, multi, fused);
    if (fused != multi || multi == 0) return 1;
    if (check) return 0;
    std::printf("median of %d: regions %.3f s, regions + rewrite %.3f s (target < 1 s)\n", rounds,
                t_regions[t_regions.size() / 2], t_apply[t_apply.size() / 2]);
    return 0;
}
