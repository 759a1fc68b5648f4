// The demo (README's first command): builds a ResNet-50-shaped graph, matches the fusion
// patterns a oneDNN backend cares about, prints counts per pattern and explains near misses,
// then partitions the graph with a backend of fusion properties and prints what each did.
// Finally it runs the graph (with weights) on oneDNN: partitioned into fused conv kernels
// generated from the patterns, against one oneDNN primitive per op (format any: the best
// unfused run) and against plain NCHW primitives (what a naive integration gets), and prints
// the partition summary, the max difference and the speedups.
// It checks its own counts and results and exits non-zero if anything differs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/dot.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {

struct conv;
struct bn;
struct shortcut;

sgmatch::node_id by_name(const graph& g, const std::string& name) {
    for (auto n : g.nodes())
        if (g.name(n) == name) return n;
    throw std::runtime_error("no node " + name);
}

int failures = 0;
void expect(const char* what, std::size_t got, std::size_t want) {
    std::printf("  %-44s %4zu matches", what, got);
    if (got != want) {
        std::printf("   <-- expected %zu", want);
        ++failures;
    }
    std::printf("\n");
}

// The same graph with weights, partitioned by properties whose fused nodes are oneDNN kernels
// generated from the patterns; timed against the unfused runs.
int run_on_onednn() {
    std::printf("\n--- running ResNet-50 (batch 1, 224x224, random weights) on oneDNN ---\n");
    const graph g = build::resnet50(1, 224, /*data_seed=*/2026);
    register_property<graph>("onednn_demo", onednn::make_fused_property<graph>(
                                                 "conv_bn_add_relu", op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>()));
    register_property<graph>("onednn_demo", onednn::make_fused_property<graph>(
                                                 "conv_bn_act", op<Conv>() >> optional(op<BatchNorm>()) >>
                                                                    repeat<0, 2>(op<Relu>() | op<Clip>() | op<Sigmoid>())));
    graph fused = g;
    const auto reports = apply_backend(fused, "onednn_demo");
    std::printf("partition summary:\n%s", summary(reports).c_str());

    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    reference::array x = xt::zeros<float>({1, 3, 224, 224});
    for (auto& v : x) v = d(rng);
    const std::map<std::string, reference::array> in{{"data", x}};

    const exec::executor fused_run(fused, exec::mode::onednn), unfused_run(g, exec::mode::onednn),
        plain_run(g, exec::mode::onednn_plain);
    const exec::executor* runs[] = {&fused_run, &unfused_run, &plain_run};
    const char* names[] = {"fused (sgmatch)", "unfused, one primitive per op, format any", "unfused, plain NCHW"};
    std::vector<reference::array> outs;
    for (auto* r : runs) outs.push_back((*r)(in).at(0));  // first run: primitives built, weights reordered
    for (int warm = 0; warm < 2; ++warm)
        for (auto* r : runs) (void)(*r)(in);
    std::vector<std::vector<double>> ms(3);
    const int rounds = 7;
    for (int round = 0; round < rounds; ++round)
        for (int k = 0; k < 3; ++k) {  // interleaved, order rotated
            const int v = (k + round) % 3;
            const auto t0 = std::chrono::steady_clock::now();
            (void)(*runs[v])(in);
            ms[static_cast<std::size_t>(v)].push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double gflop = 8.18;  // 2 x MACs of ResNet-50's convs and fc at 224x224
    for (int v = 0; v < 3; ++v) {
        const double m = median(ms[static_cast<std::size_t>(v)]);
        std::printf("  %-44s %7.1f ms  %6.0f GFLOP/s\n", names[v], m, gflop / (m / 1e3));
    }
    double diff = 0, scale = 1;
    for (std::size_t i = 0; i < outs[0].size(); ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(outs[0].data()[i] - outs[1].data()[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(outs[1].data()[i])));
    }
    std::printf("max abs difference fused vs unfused: %.3g (outputs up to %.3g)\n", diff, scale);
    std::printf("speedup of fusion: %.2fx over the best unfused run, %.2fx over plain NCHW\n",
                median(ms[1]) / median(ms[0]), median(ms[2]) / median(ms[0]));
    std::printf("(median of %d interleaved runs; the machine is shared: see benchmarks/RESULTS.md for repeated runs)\n",
                rounds);
    if (reports[0].accepted != 16 || reports[1].accepted != 37) {
        std::printf("unexpected partition: %zu + %zu fused nodes, expected 16 + 37\n", reports[0].accepted,
                    reports[1].accepted);
        return 1;
    }
    if (!(diff <= 1e-4 * scale)) {
        std::printf("fused and unfused results differ\n");
        return 1;
    }
    return 0;
}

}  // namespace

int main() {
    const graph g = build::resnet50();
    std::printf("ResNet-50-shaped graph: %zu nodes (%zu ops)\n", g.node_count(),
                static_cast<std::size_t>(std::count_if(g.nodes().begin(), g.nodes().end(), [&](node_id n) {
                    return g.kind(n) == node_kind::op;
                })));

    // The patterns: a pattern's type is its AST; nothing here runs until it meets a graph.
    constexpr auto conv_bn_relu = op<Conv>().as<conv>() >> op<BatchNorm>().as<bn>() >> op<Relu>();
    constexpr auto residual = op<Conv>() >> op<BatchNorm>() >> op<Add>(any().as<shortcut>()) >> op<Relu>();
    constexpr auto conv_bn = op<Conv>() >> op<BatchNorm>();
    constexpr auto conv_bn_act = op<Conv>().where(pred::attr_eq("group", 1)) >> optional(op<BatchNorm>()) >>
                                 repeat<0, 3>(op<Relu>() | op<Clip>() | op<Sigmoid>());

    const op_index<graph> index(g);  // reads and checks the graph once
    std::printf("\nmatches per pattern (each scanned on its own, non-overlapping within a scan):\n");
    expect(notation(conv_bn_relu).c_str(), find_all(index, conv_bn_relu).size(), 33);
    expect(notation(residual).c_str(), find_all(index, residual).size(), 16);
    expect(notation(conv_bn).c_str(), find_all(index, conv_bn).size(), 53);
    expect(notation(conv_bn_act).c_str(), find_all(index, conv_bn_act).size(), 53);

    // Typed captures: conv and bn are node ids here.
    const auto first = find_all(index, conv_bn_relu).front();
    auto [c, b] = first.get<conv, bn>();
    std::printf("\nfirst conv-bn-relu: conv=%s bn=%s relu=%s\n", std::string(g.name(c)).c_str(),
                std::string(g.name(b)).c_str(), std::string(g.name(first.output())).c_str());
    const auto res = find_all(index, residual).front();
    std::printf("first residual block: conv=%s shortcut read from %s\n", std::string(g.name(res.front())).c_str(),
                std::string(g.name(res.get<shortcut>())).c_str());

    std::printf("\nnear misses, explained:\n");
    std::cout << explain(g, by_name(g, "layer1.0.conv3"), conv_bn_relu) << "\n";
    std::cout << explain(g, by_name(g, "layer1.0.conv1"), residual) << "\n";
    std::cout << explain(g, by_name(g, "layer1.0.relu3"), op<Relu>() >> op<Conv>()) << "\n";
    std::cout << explain(g, by_name(g, "layer1.0.conv2"), op<Conv>().where(pred::attr_ints_eq("kernel_shape", 1, 1))) << "\n";

    // Partition: a backend of three fusion properties, in order; each rewrite is atomic.
    std::printf("\npartitioning with backend \"demo\" (verbose, as SGMATCH_VERBOSE=1 prints it):\n");
    std::fflush(stdout);
    const auto kinds = [](const subgraph<graph>& s) { return s.nodes.size(); };
    register_property<graph>("demo", make_property<graph>("conv_bn_add_relu", residual, kinds));
    register_property<graph>("demo", make_property<graph>("conv_bn_relu", conv_bn_relu, kinds));
    register_property<graph>("demo", make_property<graph>("conv_bn", conv_bn, kinds));
    graph fused = g;
    const auto reports = apply_backend(fused, "demo", apply_options{{}, /*verbose=*/true, nullptr});
    std::fflush(stderr);
    std::size_t fused_nodes = 0;
    for (auto& r : reports) fused_nodes += r.accepted;
    std::printf("graph after partitioning: %zu nodes (was %zu), %zu fused nodes\n", fused.node_count(), g.node_count(),
                fused_nodes);
    expect("fused conv+bn+add+relu", reports[0].accepted, 16);
    expect("fused conv+bn+relu", reports[1].accepted, 33);
    expect("fused conv+bn (projection shortcuts)", reports[2].accepted, 4);
    const op_index<graph> checked(fused);  // the rewritten graph is still a valid DAG
    (void)checked;

    if (failures) {
        std::printf("\n%d pattern count(s) differ from ResNet-50's structure\n", failures);
        return 1;
    }
    std::printf("\nall pattern counts agree with ResNet-50's structure\n");
    return run_on_onednn();
}
