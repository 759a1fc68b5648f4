// Partition throughput: match + legality + rewrite of a ~1M-node graph of ResNet blocks.
//
//   sgmatch - a backend of three properties (conv >> bn >> add(any) >> relu, conv >> bn >> relu,
//             conv >> bn), apply_backend on a copy of the graph
//   hand    - hand-written C++ for exactly those patterns, in the same order, with the same
//             legality rules, reading sgmatch::graph's records directly and calling the same
//             graph::replace, with boundaries read by graph::prepare_replace
//
// Both must leave the same graph (node count and fused nodes per kind), checked before timing.
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians, JSON with
// --benchmark_out); each iteration rewrites a fresh copy of the graph, made outside the timer.
// usage: partition_throughput [--nodes N] [--check] [--fx-curve [--rounds R]] [--sgmatch-once]
//                             [Google Benchmark flags]
//   --fx-curve: the shape of benchmarks/peers/fx_replace_pattern.py (a chain of conv -> bn ->
//   relu blocks, 6 nodes each with 3 graph inputs for weights and statistics), one property,
//   from 2k to 1M nodes, to set beside FX's curve.
//   --sgmatch-once: the sgmatch variant once, on one copy, nothing else timed or run: for counting
//   instructions, e.g. valgrind --tool=callgrind --toggle-collect='sgmatch::v0::detail::apply_writable*'
//   (the count is the machine-independent figure; wall-clock time swings with the machine).
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"

#include "gbench.hpp"
#include "hand_matcher.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using clk = std::chrono::steady_clock;

namespace {

struct outcome {
    std::size_t nodes = 0, fused[3] = {0, 0, 0};
    bool operator==(const outcome& o) const {
        return nodes == o.nodes && fused[0] == o.fused[0] && fused[1] == o.fused[1] && fused[2] == o.fused[2];
    }
};

outcome summarize(const graph& g) {
    outcome o;
    o.nodes = g.node_count();
    const auto a = g.find_op("fused.cbar"), b = g.find_op("fused.cbr"), c = g.find_op("fused.cb");
    for (auto n : g.nodes()) {
        if (g.kind(n) != node_kind::op) continue;
        const auto op = g.op(n);
        o.fused[0] += a && op == *a;
        o.fused[1] += b && op == *b;
        o.fused[2] += c && op == *c;
    }
    return o;
}

// ---------------- sgmatch ----------------
backend<graph> make_backend() {
    backend<graph> b("bench");
    auto factory = [](const subgraph<graph>& s) { return static_cast<int>(s.id); };
    b.add(make_property<graph>("cbar", op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>(), factory)
              .fused_op("fused.cbar"));
    b.add(make_property<graph>("cbr", op<Conv>() >> op<BatchNorm>() >> op<Relu>(), factory).fused_op("fused.cbr"));
    b.add(make_property<graph>("cb", op<Conv>() >> op<BatchNorm>(), factory).fused_op("fused.cb"));
    return b;
}

void run_sgmatch(graph& g, const backend<graph>& b) {
    apply_backend(g, b);  // the properties in order
}

// ---------------- hand-written: hand_matcher.hpp, then the same graph::replace ----------------
// Boundary: read by the graph itself (prepare_replace: inputs in order of first use, each once;
// the values used outside), so that the replace after it does not check every edge again: the
// fastest write the built-in graph offers. One replacement reused for every rewrite.
void hand_rewrite(graph& g, replacement<node_id>& r, const node_id* m, int n, const std::string& op, int id) {
    r.nodes.assign(m, m + n);
    g.prepare_replace(m, static_cast<std::size_t>(n), r.inputs, r.outputs);
    char digits[16];
    const auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
    r.name.assign(op).append("_").append(digits, end);
    r.op_name = op;
    r.payload = id;
    g.replace(std::move(r));
}

// All matches of a pattern are found before its first write, as sgmatch does; convs are those
// of the graph before any rewrite (the ones rewritten since are skipped).
template <hand_pattern P>
void run_hand(graph& g, const std::vector<node_id>& convs, const char* op) {
    std::vector<node_id> alive;
    for (node_id c : convs)
        if (g.contains(c)) alive.push_back(c);
    std::vector<std::array<node_id, 4>> found;
    std::vector<int> sizes;
    hand_matcher h(g);
    h.scan<P>(alive, [&](const node_id* m, int n) {
        std::array<node_id, 4> a{};
        std::copy(m, m + n, a.begin());
        found.push_back(a);
        sizes.push_back(n);
    });
    replacement<node_id> r;
    const std::string op_name = op;
    for (std::size_t i = 0; i < found.size(); ++i) hand_rewrite(g, r, found[i].data(), sizes[i], op_name, static_cast<int>(i));
}

// The FX peer's graph: blocks of (w, rm, rv inputs; conv(x, w); bn(y, rm, rv); relu).
graph fx_chain(std::size_t blocks) {
    graph g;
    node_id x = g.add_input("x");
    for (std::size_t i = 0; i < blocks; ++i) {
        const std::string k = std::to_string(i);
        const node_id w = g.add_input(std::string("w").append(k));
        const node_id rm = g.add_input(std::string("rm").append(k));
        const node_id rv = g.add_input(std::string("rv").append(k));
        const node_id c = g.add_op("Conv", std::string("conv").append(k), {x, w});
        const node_id b = g.add_op("BatchNormalization", std::string("bn").append(k), {c, rm, rv});
        x = g.add_op("Relu", std::string("relu").append(k), {b});
    }
    g.mark_output(x);
    return g;
}

int fx_curve(int rounds) {
    const auto prop = make_property<graph>("cbr", op<Conv>() >> op<BatchNorm>() >> op<Relu>(),
                                           [](const subgraph<graph>& s) { return static_cast<int>(s.id); });
    for (std::size_t nodes : {2000u, 4000u, 8000u, 16000u, 24000u, 80000u, 1000000u}) {
        const graph base = fx_chain(nodes / 6);
        std::vector<double> t;
        std::size_t fused = 0;
        for (int r = 0; r < rounds; ++r) {
            graph g = base;
            const auto a = clk::now();
            fused = apply_property(g, prop).accepted;
            t.push_back(std::chrono::duration<double>(clk::now() - a).count());
        }
        std::sort(t.begin(), t.end());
        std::printf("sgmatch apply_property: %8zu nodes, %6zu matches, median %9.4f s, %9.1f k nodes/s\n",
                    base.node_count() - 1, fused, t[t.size() / 2],
                    static_cast<double>(base.node_count()) / t[t.size() / 2] / 1e3);
        if (fused != nodes / 6) return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t target = 1'000'000;
    int rounds = 5;
    bool check = false, once = false, curve = false;
    std::vector<char*> rest{argv[0]};  // what is left for Google Benchmark
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--check")) check = true;
        else if (!std::strcmp(argv[i], "--fx-curve")) curve = true;
        else if (!std::strcmp(argv[i], "--sgmatch-once")) once = true;
        else rest.push_back(argv[i]);
    }
    if (curve) return fx_curve(rounds);
    if (check) target = 20'000;
    const graph probe = build::resnet_blocks(8);
    const graph base = build::resnet_blocks(target / (probe.node_count() / 8));
    std::printf("graph: %zu nodes\n", base.node_count());
    const backend<graph> b = make_backend();
    if (once) {
        graph g = base;
        run_sgmatch(g, b);
        const outcome o = summarize(g);
        std::printf("sgmatch once: %zu nodes left, %zu/%zu/%zu fused\n", o.nodes, o.fused[0], o.fused[1], o.fused[2]);
        return o.fused[0] == 0 ? 1 : 0;
    }
    const op_index<graph> idx(base);
    const auto [cb, ce] = idx.nodes_with_op(*base.find_op("Conv"));
    const std::vector<node_id> convs(cb, ce);
    auto hand = [&](graph& g) {
        run_hand<hand_pattern::conv_bn_add_relu>(g, convs, "fused.cbar");
        run_hand<hand_pattern::conv_bn_relu>(g, convs, "fused.cbr");
        run_hand<hand_pattern::conv_bn>(g, convs, "fused.cb");
    };

    graph g1 = base, g2 = base;
    run_sgmatch(g1, b);
    hand(g2);
    const outcome o1 = summarize(g1), o2 = summarize(g2);
    if (!(o1 == o2) || o1.fused[0] == 0 || o1.fused[1] == 0 || o1.fused[2] == 0) {
        std::printf("variants disagree or found nothing: sgmatch %zu nodes (%zu/%zu/%zu), hand %zu nodes (%zu/%zu/%zu)\n",
                    o1.nodes, o1.fused[0], o1.fused[1], o1.fused[2], o2.nodes, o2.fused[0], o2.fused[1], o2.fused[2]);
        return 1;
    }
    std::printf("fused: %zu conv+bn+add+relu, %zu conv+bn+relu, %zu conv+bn; %zu nodes left; variants agree: yes\n",
                o1.fused[0], o1.fused[1], o1.fused[2], o1.nodes);
    if (check) return 0;

    // Nodes per second of the graph before the rewrite, as the items processed.
    const auto nodes = static_cast<std::int64_t>(base.node_count());
    auto add = [&](const char* name, auto f) {
        benchmark::RegisterBenchmark(name, [&base, nodes, f](benchmark::State& st) {
            sgbench::on_fresh_copies(st, base, [&f](graph& g) {
                f(g);
                return g.node_count();
            });
            st.SetItemsProcessed(st.iterations() * nodes);
        })->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    add("sgmatch", [&b](graph& g) { run_sgmatch(g, b); });
    add("hand", hand);
    return sgbench::run(static_cast<int>(rest.size()), rest.data(),
                        {{"sgmatch / hand", "sgmatch", "hand", "(whole backend, 3 properties)"}});
}
