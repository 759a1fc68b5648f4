// The demo (README's first command): builds a ResNet-50-shaped graph, matches the fusion
// patterns a oneDNN backend cares about, prints counts per pattern and explains near misses,
// then partitions the graph with a backend of fusion properties and prints what each did.
// It checks its own counts against ResNet-50's structure and exits non-zero if they differ.
#include <cstdio>
#include <iostream>
#include <string>

#include "sgmatch/graph/builders.hpp"
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
    const auto reports = apply_backend(fused, "demo", apply_options{{}, /*verbose=*/true});
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
    return 0;
}
