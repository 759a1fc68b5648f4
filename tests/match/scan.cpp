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

TEST_CASE("a wildcard anchor tries every node; an absent op finds nothing") {
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
