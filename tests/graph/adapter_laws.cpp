// The adapter laws, run against every adapter we have.
#include <doctest/doctest.h>

#include <random>

#include "nnvm_adapter.hpp"
#include "sgmatch/graph/builders.hpp"
#include "support/adapter_laws.hpp"
#include "support/tiny_graph.hpp"

using namespace sgmatch;

TEST_CASE("laws: built-in graph") {
    SUBCASE("chain") {
        graph g;
        build::chain(g, {"Conv", "Relu", "Relu"});
        sgtest::check_adapter_laws(g);
    }
    SUBCASE("resnet50") { sgtest::check_adapter_laws(build::resnet50()); }
    SUBCASE("random dags") {
        for (std::uint64_t seed = 1; seed <= 5; ++seed) sgtest::check_adapter_laws(build::random_dag(300, seed));
    }
    SUBCASE("after a replace") {
        graph g;
        auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu", "Sigmoid"});
        replacement<node_id> r;
        r.nodes = {ids[0], ids[1]};
        r.inputs = {g.input(ids[0], 0)};
        r.outputs = {{ids[1], 0}};
        r.name = "fused";
        g.replace(r);
        sgtest::check_adapter_laws(g);
    }
}

TEST_CASE("laws: built-in graph after redirects and erasures (the clean-up passes' writes)") {
    // Random DAGs; each round redirects a random value's uses to an earlier value (never one
    // that depends on it: refused, graph unchanged) and erases what nothing reads any more.
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        graph g = build::random_dag(200, seed);
        std::mt19937_64 rng(seed);
        std::size_t redirected = 0, refused = 0, erased = 0;
        for (int round = 0; round < 60; ++round) {
            const auto& order = g.nodes();
            std::vector<node_id> nodes(order.begin(), order.end());
            const node_id a = nodes[rng() % nodes.size()], b = nodes[rng() % nodes.size()];
            const std::size_t users_before = g.user_count(a) + g.user_count(b);
            try {
                g.redirect({a, 0}, {b, 0});
                ++redirected;
            } catch (const graph_error& e) {
                CHECK(std::string(e.what()).find("would make a cycle") != std::string::npos);
                CHECK(g.user_count(a) + g.user_count(b) == users_before);  // unchanged
                ++refused;
            }
            if (g.user_count(a) == 0 && !g.has_graph_output(a) && g.kind(a) == node_kind::op) {
                g.erase(a);
                ++erased;
            }
            sgtest::check_adapter_laws(g);
        }
        CHECK(redirected > 0);
        CHECK(refused > 0);
        CHECK(erased > 0);
    }
    graph g;
    auto x = g.add_input("x");
    auto r = g.add_op("Relu", "r", {x});
    g.mark_output(r);
    CHECK_THROWS_WITH_AS(g.erase(r), "sgmatch::graph::erase: 'r' is still read (0 users, a graph output)", graph_error);
    CHECK_THROWS_WITH_AS(g.erase(x), "sgmatch::graph::erase: 'x' is still read (1 users)", graph_error);
    CHECK_THROWS_WITH_AS(g.redirect({x, 0}, {r, 0}), doctest::Contains("'r' depends on 'x'"), graph_error);
    static_assert(is_rewritable_graph_v<graph>);
    static_assert(!is_rewritable_graph_v<sgtest::tiny_graph>);
}

TEST_CASE("laws: nnvm-style pointer graph") {
    using mini_nnvm::Node;
    mini_nnvm::Symbol sym;
    mini_nnvm::NodeEntry x{Node::Variable("data"), 0};
    auto w = Node::Variable("w", true);
    auto c = Node::Create("Convolution", "conv", {x, {w, 0}});
    auto a = Node::Create("Activation", "act", {{c, 0}}, {{"act_type", "relu"}});
    auto s = Node::Create("elemwise_add", "add", {{a, 0}, {c, 0}});
    sym.outputs = {{s, 0}, {a, 0}};
    nnvm_view view(sym);
    sgtest::check_adapter_laws(view);
    CHECK(graph_traits<nnvm_view>::attr(view, a.get(), "act_type")->as_string() == std::string_view("relu"));
    CHECK(graph_traits<nnvm_view>::kind(view, w.get()) == node_kind::constant);
}

TEST_CASE("laws: minimal vector adapter") {
    sgtest::tiny_graph g;
    int x = g.input("x");
    int a = g.op("Relu", "a", {{x, 0}});
    int b = g.op("Add", "b", {{a, 0}, {x, 0}});
    g.outputs = {{b, 0}};
    sgtest::check_adapter_laws(g);
}
