// Inconsistent graphs from an adapter: graph_error naming the node, never a crash.
#include <doctest/doctest.h>

#include "nnvm_adapter.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
#include "sgmatch/testing/check_adapter.hpp"
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

TEST_CASE("check_adapter names each broken law, reads nothing out of range, and says what the adapter can do") {
    auto chain = [] {
        tiny_graph g;
        int x = g.input("x");
        int c = g.op("Conv", "c", {{x, 0}});
        g.outputs.push_back({g.op("Relu", "r", {{c, 0}}), 0});
        return g;
    };
    auto has = [](const testing::adapter_report& r, const std::string& text) {
        for (const auto& v : r.violations)
            if (v.find(text) != std::string::npos) return true;
        return false;
    };
    {
        const tiny_graph g = chain();
        const auto r = testing::check_adapter(g);
        INFO(r.str());
        CHECK(r.ok());
        CHECK(r.nodes == 3);
        CHECK(r.edges == 2);
        CHECK(r.can_match);
        CHECK_FALSE(r.runs_fused_nodes);  // the test adapter has no payload()
        CHECK(r.str().find("payload(g, n)") != std::string::npos);
    }
    {
        tiny_graph g = chain();
        g.forget_users = true;
        const auto r = testing::check_adapter(g);
        CHECK_FALSE(r.ok());
        CHECK(has(r, "reads the node at index 0 on slot 0, but user(g, n, i) of the producer does not list it"));
        CHECK(has(r, "reads the node at index 1 on slot 0"));
    }
    {
        tiny_graph g = chain();
        g.order = {0, 2, 1};  // r before the c it reads
        const auto r = testing::check_adapter(g);
        CHECK(has(r, "node 'r' input 0 reads 'c', which nodes(g) lists after it (not a topological order)"));
    }
    {
        tiny_graph g = chain();
        g.order = {0, 1, 1, 2};
        const auto r = testing::check_adapter(g);
        CHECK(has(r, "node 'c': index 1 shared with another node, or the node listed twice"));
        CHECK(r.edges == 0);  // nothing indexed after that
    }
    {
        tiny_graph g = chain();
        g.nodes[1].op = 9;
        g.nodes[2].inputs[0].port = 3;
        const auto r = testing::check_adapter(g);
        CHECK(has(r, "op node 'c' has op id 9, not below op_count(g) = 2"));
        CHECK(has(r, "node 'r' input 0 reads port 3 of 'c', which has 1 output(s)"));
    }
    {
        tiny_graph g = chain();
        g.nodes[2].inputs[0].node = 40;  // a producer that does not exist
        g.outputs[0].node = 41;
        const auto r = testing::check_adapter(g);
        CHECK(has(r, "node 'r' input 0 names a node nodes(g) does not list"));
        CHECK(has(r, "graph output 0 names a node nodes(g) does not list"));
    }
    {
        tiny_graph g = chain();
        g.order = {2, 1, 0};  // every edge backwards: 2 violations, at most 1 listed
        const auto r = testing::check_adapter(g, 1);
        CHECK(r.violations.size() == 1);
        CHECK(r.truncated);
    }
    {
        const graph g = build::resnet50();
        const auto r = testing::check_adapter(g);
        CHECK(r.ok());
        CHECK(r.can_partition);
        CHECK(r.can_execute);
        CHECK(r.runs_fused_nodes);
        CHECK(r.missing.empty());
    }
}
