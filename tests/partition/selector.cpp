// Selectors: the tutorial's hand-written Conv -> BatchNorm selector against the one generated from
// a pattern, and generated selectors against pattern properties.
#include <doctest/doctest.h>

#include <any>
#include <memory>
#include <vector>

#include "mxnet_conv_bn_selector.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/partition/selector.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {

using groups = std::vector<std::vector<node_id>>;

groups fused_groups(const graph& g) {
    groups out;
    for (auto n : g.nodes())
        if (g.payload(n).has_value()) out.push_back(std::any_cast<const std::vector<node_id>&>(g.payload(n)));
    return out;
}

auto keep_nodes = [](const subgraph<graph>& s) { return s.nodes; };

groups partition(const graph& base, const property<graph>& p) {
    graph g = base;
    apply_property(g, p);
    const op_index<graph> checked(g);  // still a valid graph
    return fused_groups(g);
}

property<graph> hand_written() {
    return make_selector_property<graph>(
        "hand", [](const graph& g) { return std::make_unique<conv_bn_selector>(g); }, keep_nodes);
}
property<graph> generated() {
    return make_selector_property<graph>(
        "generated", [](const graph& g) { return make_selector(g, op<Conv>() >> op<BatchNorm>()); }, keep_nodes);
}

}  // namespace

TEST_CASE("tutorial cases: no BatchNorm, two BatchNorms, extra BatchNorm outputs, a path around") {
    graph g;
    auto x = g.add_input("x");
    auto lone = g.add_op("Conv", "lone", {x});                 // no BatchNorm: filter drops it
    auto c = g.add_op("Conv", "c", {lone});
    auto b1 = g.add_op("BatchNormalization", "b1", {c});
    auto b2 = g.add_op("BatchNormalization", "b2", {c});        // second BatchNorm: stays outside
    auto c3 = g.add_op("Conv", "c3", {g.add_op("Add", "a", {b1, b2})});
    auto b3 = g.add_op("BatchNormalization", "b3", {c3}, {}, 3);  // three outputs (y, mean, var)
    auto use_mean = g.add_op("Relu", "use_mean", {value_ref<node_id>{b3, 1}});
    auto c4 = g.add_op("Conv", "c4", {b3});
    auto side = g.add_op("Sigmoid", "side", {c4});
    auto b4 = g.add_op("BatchNormalization", "b4", {c4, side});  // c4 -> side -> b4: not convex
    g.mark_output(b4);
    g.mark_output(use_mean);
    const groups by_hand = partition(g, hand_written());
    const groups by_pattern = partition(g, generated());
    CHECK(by_hand == by_pattern);
    REQUIRE(by_hand.size() == 2);
    CHECK(by_hand[0] == std::vector<node_id>{c, b1});
    CHECK(by_hand[1] == std::vector<node_id>{c3, b3});
    // The conv feeding b2 becomes an extra output; b3's second output stays available.
    graph h = g;
    apply_property(h, generated());
    CHECK(h.output_count(h.input(b2, 0).node) == 2);
    CHECK(h.op_name(h.input(use_mean, 0).node) == "sgmatch.generated");
}

TEST_CASE("hand-written and generated selectors give the same partitions over many graphs") {
    std::vector<graph> graphs;
    graphs.push_back(build::resnet50());
    build::random_dag_options o;
    o.ops = {"Conv", "BatchNormalization", "Relu", "Add", "Conv", "BatchNormalization"};
    for (std::uint64_t seed = 0; seed < 200; ++seed) graphs.push_back(build::random_dag(30 + seed * 5, seed, o));
    std::size_t fused = 0;
    for (const graph& base : graphs) {
        const groups a = partition(base, hand_written());
        const groups b = partition(base, generated());
        CHECK(a == b);
        fused += a.size();
    }
    CHECK(fused > 500);
}

// The two differ only where a complete match is illegal: the property then falls back to the
// next-longest match at the anchor, while MXNet's partitioner (grow, filter, check) drops the
// seed (and a shorter match taken early can change later ones, so neither partition contains
// the other in general). They are compared on the graphs where the property declined nothing.
TEST_CASE("a generated selector partitions like the pattern's own property with escaping allowed") {
    build::random_dag_options o;
    o.ops = {"Conv", "BatchNormalization", "Relu", "Add", "Mul", "Sigmoid"};
    std::size_t fused = 0, compared = 0, declined = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const graph base = build::random_dag(40 + seed * 3, seed, o);
        // Operands exercise select_input; alternatives and optional exercise the engine.
        constexpr auto p1 = op<Add>(op<Conv>(), any()) >> optional(op<Relu>());
        constexpr auto p2 = op<Mul>(any(), op<Sigmoid>(any())) | (op<Conv>() >> op<BatchNorm, Relu>());
        auto prop1 = make_property<graph>("p1", p1, keep_nodes);
        prop1.allow_escaping();
        auto prop2 = make_property<graph>("p2", p2, keep_nodes);
        prop2.allow_escaping();
        const auto sel1 = make_selector_property<graph>("s1", [&](const graph& g) { return make_selector(g, p1); }, keep_nodes);
        const auto sel2 = make_selector_property<graph>("s2", [&](const graph& g) { return make_selector(g, p2); }, keep_nodes);
        for (int k = 0; k < 2; ++k) {
            const property<graph>& prop = k == 0 ? prop1 : prop2;
            graph g = base;
            const auto rep = apply_property(g, prop);
            const groups a = fused_groups(g);
            const groups b = partition(base, k == 0 ? sel1 : sel2);
            if (rep.rejected_cycle == 0 && rep.rejected_size == 0) {
                CHECK(a == b);
                ++compared;
            } else {
                ++declined;
            }
            fused += a.size();
        }
    }
    CHECK(fused > 200);
    CHECK(compared > 200);
    CHECK(declined > 0);  // the other case occurs in this set too
}
