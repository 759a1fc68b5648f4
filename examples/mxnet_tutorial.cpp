// MXNet's Subgraph API tutorial, reproduced: a Conv -> BatchNorm selector written by hand, the
// same selector generated from a one-line pattern, a property that creates the fused node,
// registered under a backend and switched on the way a framework's executor would do it.
// Exits non-zero if the two selectors ever disagree.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mxnet_conv_bn_selector.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/partition/selector.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {

// What the fused node carries: the tutorial names it "ConvBN<id>" and keeps the subgraph.
struct conv_bn_node {
    std::string name;
    std::vector<node_id> nodes;
};

auto create_subgraph_node = [](const subgraph<graph>& s) {
    return conv_bn_node{"ConvBN" + std::to_string(s.id), s.nodes};
};

// Registration, as a framework does it once in a .cpp: backend "SgTest", two properties in order.
const bool registered =
    register_property<graph>("SgTest", make_selector_property<graph>(
                                           "hand-written conv_bn",
                                           [](const graph& g) { return std::make_unique<conv_bn_selector>(g); },
                                           create_subgraph_node)) &&
    register_property<graph>("SgTestPattern",
                             make_selector_property<graph>(
                                 "pattern conv_bn",
                                 [](const graph& g) { return make_selector(g, op<Conv>() >> op<BatchNorm>()); },
                                 create_subgraph_node));

std::vector<std::vector<node_id>> fused_groups(const graph& g) {
    std::vector<std::vector<node_id>> out;
    for (auto n : g.nodes())
        if (g.payload(n).has_value()) out.push_back(std::any_cast<const conv_bn_node&>(g.payload(n)).nodes);
    return out;
}

}  // namespace

int main() {
    if (!registered) return 1;
    // A graph with the tutorial's cases: a conv with one BatchNorm, a conv with none, and a conv
    // feeding two BatchNorms (the first offered is taken; the second keeps reading the conv's
    // value, which becomes an extra output of the fused node).
    graph g;
    auto x = g.add_input("data");
    auto c1 = g.add_op("Conv", "conv1", {x});
    auto b1 = g.add_op("BatchNormalization", "bn1", {c1});
    auto c2 = g.add_op("Conv", "conv2", {b1});
    auto r2 = g.add_op("Relu", "relu2", {c2});
    auto c3 = g.add_op("Conv", "conv3", {r2});
    auto b3a = g.add_op("BatchNormalization", "bn3a", {c3});
    auto b3b = g.add_op("BatchNormalization", "bn3b", {c3});
    auto out = g.add_op("Add", "add", {b3a, b3b});
    g.mark_output(out);

    int failures = 0;
    for (const graph& base : {g, build::resnet50()}) {
        graph by_hand = base, by_pattern = base;
        // The executor's hook: SGMATCH_BACKEND picks the backend. A process reads its environment
        // once; this program changes its own, so it reads it again each time.
        setenv("SGMATCH_BACKEND", "SgTest", 1);
        const auto r1 = apply_backend_from_env(by_hand, environment::read());
        setenv("SGMATCH_BACKEND", "SgTestPattern", 1);
        const auto r2 = apply_backend_from_env(by_pattern, environment::read());
        unsetenv("SGMATCH_BACKEND");
        const bool same = fused_groups(by_hand) == fused_groups(by_pattern);
        failures += same ? 0 : 1;
        std::printf("graph of %zu nodes: hand-written selector fused %zu, pattern selector fused %zu, same partition: %s\n",
                    base.node_count(), r1[0].accepted, r2[0].accepted, same ? "yes" : "NO");
    }
    // The first graph in detail.
    graph h = g;
    apply_backend(h, "SgTestPattern", apply_options{{}, /*verbose=*/true, nullptr});
    std::size_t fused = 0, two_outputs = 0;
    for (auto n : h.nodes()) {
        if (!h.payload(n).has_value()) continue;
        const auto& info = std::any_cast<const conv_bn_node&>(h.payload(n));
        std::printf("%s replaces", info.name.c_str());
        for (auto m : info.nodes) std::printf(" %s", std::string(g.name(m)).c_str());
        std::printf("; %zu output(s)\n", h.output_count(n));
        ++fused;
        two_outputs += h.output_count(n) == 2;
    }
    // conv1+bn1 and conv3+bn3a; conv2 has no BatchNorm; conv3's value also feeds bn3b.
    if (fused != 2 || two_outputs != 1 || h.op_name(h.input(b3b, 0).node) != "sgmatch.pattern conv_bn") {
        std::printf("unexpected partition\n");
        ++failures;
    }
    (void)c2;
    (void)out;
    return failures;
}
