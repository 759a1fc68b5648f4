// Inconsistent graphs from an adapter: graph_error naming the node, never a crash.
#include <doctest/doctest.h>

#include "nnvm_adapter.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/tiny_graph.hpp"

using namespace sgmatch;
using sgtest::tiny_graph;

TEST_CASE("op_index rejects a dangling input") {
    tiny_graph g;
    int x = g.input("x");
    g.op("Relu", "r", {{x, 0}});
    g.nodes.push_back({"ghost", node_kind::op, 0, {}, 1});  // in storage, not in the order
    g.op("Relu", "s", {{2, 0}});
    g.order = {0, 1, 3};
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 's' input 0 refers to a node that is not in the graph"),
                         graph_error);
}

TEST_CASE("op_index rejects a cycle or a non-topological order") {
    tiny_graph g;
    int x = g.input("x");
    int a = g.op("Relu", "a", {{x, 0}});
    int b = g.op("Relu", "b", {{a, 0}});
    g.nodes[static_cast<std::size_t>(a)].inputs[0] = {b, 0};  // a <- b <- a
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 'a' input 0 reads 'b', which does not come before it"),
                         graph_error);
}

TEST_CASE("op_index and the matcher reject a port out of range") {
    tiny_graph g;
    int x = g.input("x");
    int a = g.op("Relu", "a", {{x, 0}});
    int b = g.op("Add", "b", {{a, 0}, {a, 3}});
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 'b' input 1 reads output 3 of 'a', which has 1 output(s)"),
                         graph_error);
    // match() reads only what it needs, and checks what it reads.
    CHECK_THROWS_AS(match(g, b, op<ops::Add>(any(), any())), graph_error);
}

TEST_CASE("op_index rejects an op id out of range and a node listed twice") {
    tiny_graph g;
    int x = g.input("x");
    g.op("Relu", "a", {{x, 0}});
    g.order = {0, 1, 1};
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 'a' appears twice"), graph_error);
    g.order = {0, 1};
    g.nodes[1].op = 9;
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 'a' has op id 9"), graph_error);
}

TEST_CASE("op_index rejects an adapter whose users do not match the inputs") {
    tiny_graph g;
    int x = g.input("x");
    int c = g.op("Conv", "c", {{x, 0}});
    g.op("Relu", "r", {{c, 0}});
    g.forget_users = true;  // user_count() is 0 everywhere: a matcher would see no chains at all
    CHECK_THROWS_WITH_AS(op_index<tiny_graph>{g}, doctest::Contains("node 'x' has 0 user(s) by user_count/user, but 1 input slot(s)"),
                         graph_error);
    g.forget_users = false;
    CHECK_NOTHROW(op_index<tiny_graph>{g});
}

TEST_CASE("the nnvm-style adapter reports a cycle by name") {
    using mini_nnvm::Node;
    mini_nnvm::Symbol sym;
    auto a = Node::Create("relu", "a", {});
    auto b = Node::Create("relu", "b", {{a, 0}});
    a->inputs.push_back({b, 0});
    sym.outputs = {{b, 0}};
    CHECK_THROWS_WITH_AS(nnvm_view{sym}, doctest::Contains("cycle through node"), graph_error);
    a->inputs.clear();  // break the shared_ptr cycle so the test does not leak
}
