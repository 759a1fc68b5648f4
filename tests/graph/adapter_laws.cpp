// The adapter laws, run against every adapter we have.
#include <doctest/doctest.h>

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
