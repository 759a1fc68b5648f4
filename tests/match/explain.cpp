// explain(): where and why a match failed.
#include <doctest/doctest.h>

#include <string>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {
struct fixture {
    graph g;
    node_id x, conv, bn, pool;
    fixture() {
        x = g.add_input("x");
        conv = g.add_op("Conv", "conv_3", {x});
        bn = g.add_op("BatchNormalization", "bn_3", {conv});
        pool = g.add_op("MaxPool", "pool_4", {conv});
        g.add_op("Relu", "relu_3", {bn});
    }
};
}  // namespace

TEST_CASE("explain names the node and the rule") {
    fixture f;
    const std::string s = explain(f.g, f.conv, op<Conv>().escaping() >> op<BatchNorm>() >> op<Sigmoid>());
    CHECK(s.find("no match") != std::string::npos);
    CHECK(s.find("node 'bn_3': no user of output 0 is Sigmoid (users: 'relu_3' (Relu))") != std::string::npos);
    CHECK(s.find("matched so far: conv_3 (Conv) bn_3 (BatchNormalization)") != std::string::npos);
}

TEST_CASE("explain reports an intermediate used outside the match") {
    fixture f;
    // Two users, one node of room: rejected before trying them, and the message says why.
    const std::string s = explain(f.g, f.conv, op<Conv>() >> op<BatchNorm>());
    CHECK(s.find("node 'conv_3': its output is used by 2 nodes ('bn_3', 'pool_4')") != std::string::npos);
    // With room for both users, the closure check itself reports it.
    const std::string s2 = explain(f.g, f.conv, op<Conv>() >> op<BatchNorm>() >> optional(op<Relu>()) >> optional(op<Relu>()));
    CHECK(s2.find("node 'conv_3': its output is also used by 'pool_4', outside the match") != std::string::npos);
}

TEST_CASE("explain covers kinds, counts, predicates and success") {
    fixture f;
    CHECK(explain(f.g, f.bn, op<Conv>()).find("node 'bn_3' is BatchNormalization, expected Conv") != std::string::npos);
    CHECK(explain(f.g, f.x, op<Conv>()).find("node 'x' is a graph input or constant, expected Conv") != std::string::npos);
    CHECK(explain(f.g, f.conv, op<Conv>(constant())).find("node 'x' is not a constant") != std::string::npos);
    CHECK(explain(f.g, f.conv, op<Conv>(any(), any())).find("has 1 input(s), the pattern expects 2") != std::string::npos);
    CHECK(explain(f.g, f.conv, op<Conv>().where(pred::attr_eq("group", 2)))
              .find("node 'conv_3' fails the predicate {group==2}") != std::string::npos);
    CHECK(explain(f.g, f.bn, op<BatchNorm>() >> op<Relu>()).find("matched 2 node(s): bn_3 relu_3") != std::string::npos);
}

TEST_CASE("explain reports the deepest failure among alternatives") {
    fixture f;
    const std::string s = explain(f.g, f.bn, op<BatchNorm>() >> (op<Sigmoid>() | (op<Relu>() >> op<Tanh>())));
    CHECK(s.find("node 'relu_3': no user of output 0 is Tanh (it has no users)") != std::string::npos);
}
