// Whole-graph scans: anchors, topological order, no overlap.
#include <doctest/doctest.h>

#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

TEST_CASE("find_all on ResNet-50 finds each fusion site once") {
    const graph g = build::resnet50();
    const op_index<graph> idx(g);
    CHECK(find_all(idx, op<Conv>() >> op<BatchNorm>() >> op<Relu>()).size() == 33);
    CHECK(find_all(idx, op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>()).size() == 16);
    CHECK(find_all(idx, op<Conv>() >> op<BatchNorm>()).size() == 53);
    CHECK(find_all(g, op<Relu>() >> op<MaxPool>()).size() == 1);
    CHECK(find_all(g, op<Conv>().where(pred::attr_ints_eq("strides", 2, 2))).size() == 4 + 3);  // conv1, 3 conv2s, 3 downsamples
}

TEST_CASE("matches do not overlap and come in topological order of their anchors") {
    graph g;
    auto ids = build::chain(g, {"Relu", "Relu", "Relu", "Relu", "Relu"});
    auto all = find_all(g, op<Relu>() >> op<Relu>());
    REQUIRE(all.size() == 2);
    CHECK(all[0].front() == ids[0]);
    CHECK(all[1].front() == ids[2]);
}

TEST_CASE("several anchor kinds are merged in topological order") {
    graph g;
    auto ids = build::chain(g, {"MatMul", "Relu", "Conv", "Relu", "MatMul", "Relu"});
    auto all = find_all(g, (op<Conv>() | op<MatMul>()) >> op<Relu>());
    REQUIRE(all.size() == 3);
    CHECK(all[0].front() == ids[0]);
    CHECK(all[1].front() == ids[2]);
    CHECK(all[2].front() == ids[4]);
}

TEST_CASE("a wildcard anchor tries every node - an absent op finds nothing") {
    graph g;
    build::chain(g, {"Conv", "Relu", "Sigmoid"});
    CHECK(find_all(g, any() >> op<Sigmoid>()).size() == 1);
    CHECK(find_all(g, op<Softmax>()).empty());
}

TEST_CASE("for_each_match and find_all agree on a random DAG") {
    const graph g = build::random_dag(3000, 11);
    const op_index<graph> idx(g);
    constexpr auto p = op<Conv>() >> optional(op<BatchNorm>()) >> op<Relu, Sigmoid>();
    std::size_t seen = 0;
    std::vector<std::uint8_t> used(g.index_bound(), 0);
    const auto n = for_each_match(idx, p, [&](const auto& m) {
        ++seen;
        for (auto node : m) {
            CHECK(used[node.value] == 0);
            used[node.value] = 1;
        }
        // Every internal node's users are inside the match.
        for (auto node : m) {
            if (node == m.output()) continue;
            for (auto& u : g.users(node)) CHECK(m.contains(u.user));
        }
    });
    CHECK(n == seen);
    CHECK(n == find_all(idx, p).size());
    CHECK(n > 0);
}

TEST_CASE("a shared taken mask keeps several scans disjoint, in order") {
    graph g;
    auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu"});
    const op_index<graph> idx(g);
    taken_mask taken;
    std::size_t first = for_each_match(idx, op<BatchNorm>() >> op<Relu>(), [](const auto&) {}, taken);
    std::size_t second = for_each_match(idx, op<Conv>() >> op<BatchNorm>() >> op<Relu>(), [](const auto&) {}, taken);
    std::size_t third = for_each_match(idx, op<Conv>(), [](const auto&) {}, taken);
    CHECK(first == 1);
    CHECK(second == 0);  // bn and relu are taken
    CHECK(third == 1);
    CHECK(taken[ids[0].value] == 1);
    CHECK(taken[ids[1].value] == 1);
}

namespace {
struct cc;
// The general engine, candidate by candidate in topological order, with the same taken rule.
template <class P>
std::vector<std::vector<node_id>> reference_scan(const graph& g, const P& p) {
    const matcher<graph, P> m(g, p);
    std::vector<std::uint8_t> taken(g.index_bound(), 0);
    std::vector<std::vector<node_id>> out;
    for (auto n : g.nodes()) {
        if (taken[n.value]) continue;
        auto r = m.at(n, taken.data());
        if (!r) continue;
        out.emplace_back(r.begin(), r.end());
        for (auto x : r) taken[x.value] = 1;
    }
    return out;
}
template <class P>
std::vector<std::vector<node_id>> scan_nodes(const graph& g, const P& p) {
    std::vector<std::vector<node_id>> out;
    for_each_match(op_index<graph>(g), p, [&](const auto& m) { out.emplace_back(m.begin(), m.end()); });
    return out;
}
}  // namespace

TEST_CASE("scans of simple chains (straight-line path) equal the general engine, fallbacks included") {
    build::random_dag_options o;
    o.ops = {"Conv", "BatchNormalization", "Relu", "Add", "Mul", "Sigmoid"};
    o.window = 4;  // short edges: many chains, many multi-user nodes (fallbacks)
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        graph g = build::random_dag(400, seed, o);
        for (std::uint32_t i = 7; i < g.index_bound(); i += 37) g.mark_output(node_id{i});  // internal outputs
        CAPTURE(seed);
        constexpr auto p1 = op<Conv>() >> op<BatchNorm>() >> op<Relu>();
        constexpr auto p2 = op<Conv>().as<cc>() >> op<Add>(any()) >> op<Relu, Sigmoid>().where(pred::num_inputs{1});
        constexpr auto p3 = op<Mul>(any(), any()) >> op<Relu>();
        constexpr auto p4 = op<Relu>();
        CHECK(scan_nodes(g, p1) == reference_scan(g, p1));
        CHECK(scan_nodes(g, p2) == reference_scan(g, p2));
        CHECK(scan_nodes(g, p3) == reference_scan(g, p3));
        CHECK(scan_nodes(g, p4) == reference_scan(g, p4));
        static_assert(detail::fast_pattern<std::decay_t<decltype(p2)>>::value);
        static_assert(!detail::fast_pattern<std::decay_t<decltype(op<Conv>() >> optional(op<Relu>()))>>::value);
    }
    // Captures come out the same on both paths.
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "c", {x});
    auto a = g.add_op("Add", "a", {c, x});
    auto r = g.add_op("Relu", "r", {a});
    constexpr auto p = op<Conv>().as<cc>() >> op<Add>(any()) >> op<Relu>();
    auto all = find_all(g, p);
    REQUIRE(all.size() == 1);
    CHECK(all[0].get<cc>() == c);
    CHECK(all[0].output() == r);
    CHECK(match(g, c, p).get<cc>() == c);
}

TEST_CASE("find_all's list hands out the same matches, nodes and captures as for_each_match") {
    struct cc;
    struct act;
    const graph g = build::random_dag(2000, 5);
    const op_index<graph> idx(g);
    constexpr auto p = op<Conv>().as<cc>() >> optional(op<BatchNorm>()) >> repeat<0, 2>(op<Relu, Sigmoid>().as<act>());
    std::vector<std::vector<node_id>> nodes;
    std::vector<node_id> convs, outputs;
    std::vector<std::vector<node_id>> acts;
    for_each_match(idx, p, [&](const auto& m) {
        nodes.emplace_back(m.begin(), m.end());
        convs.push_back(m.template get<cc>());
        acts.push_back(m.template get<act>());
        outputs.push_back(m.output());
    });
    const auto list = find_all(idx, p);
    REQUIRE(list.size() == nodes.size());
    REQUIRE(list.size() > 3);
    std::size_t i = 0;
    for (const auto& m : list) {  // iteration and indexing agree with the callback's view
        CHECK(std::vector<node_id>(m.begin(), m.end()) == nodes[i]);
        CHECK(list[i].get<cc>() == convs[i]);
        CHECK(list[i].get<act>() == acts[i]);
        CHECK(m.output() == outputs[i]);
        ++i;
    }
    CHECK(i == list.size());
    CHECK(list.back().front() == nodes.back().front());
    CHECK(list.front().get<cc>() == convs.front());
}
