// The built-in graph: building, reading, the write side and its strong guarantee.
#include <doctest/doctest.h>

#include <algorithm>
#include <any>
#include <string>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "support/graph_check.hpp"

using namespace sgmatch;

using sgmatch_test::fingerprint;

TEST_CASE("building a graph records inputs, users, names, attributes and types") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 3, 8, 8}});
    auto w = g.add_constant("w", {4, 3, 3, 3});
    auto c = g.add_op("Conv", "conv", {x, w}, {{"group", 1}, {"strides", attribute::ints{2, 2}}, {"auto_pad", "NOTSET"}});
    auto r = g.add_op("Relu", "relu", {c});
    g.mark_output(r);

    CHECK(g.node_count() == 4);
    CHECK(g.name(c) == "conv");
    CHECK(g.kind(x) == node_kind::input);
    CHECK(g.kind(w) == node_kind::constant);
    CHECK(g.op_name(c) == "Conv");
    REQUIRE(g.find_op("Relu").has_value());
    CHECK(*g.find_op("Relu") == g.op(r));
    CHECK_FALSE(g.find_op("Sigmoid").has_value());
    CHECK(g.input_count(c) == 2);
    CHECK(g.input(c, 1).node == w);
    REQUIRE(g.user_count(x) == 1);
    CHECK(g.user(x, 0).user == c);
    CHECK(g.user(w, 0).slot == 1);
    CHECK(g.attr(c, "group")->as_int() == 1);
    CHECK(*g.attr(c, "strides")->as_ints() == attribute::ints{2, 2});
    CHECK(g.attr(c, "auto_pad")->as_string() == std::string_view("NOTSET"));
    CHECK_FALSE(g.attr(c, "dilations").has_value());
    CHECK_FALSE(g.attr(r, "group").has_value());
    CHECK(g.value_type(x, 0)->dims == std::vector<std::int64_t>{1, 3, 8, 8});
    CHECK_FALSE(g.value_type(c, 0).has_value());
    CHECK(g.is_graph_output(r, 0));
    CHECK_FALSE(g.is_graph_output(c, 0));
    const auto order = g.nodes();
    CHECK(order == std::vector<node_id>{x, w, c, r});
}

TEST_CASE("constants carry shape and optional data") {
    graph g;
    auto s = g.add_scalar("half", 0.5f);
    auto v = g.add_constant("v", {2}, {1.0f, 2.0f});
    auto shape_only = g.add_constant("big", {1000, 1000});
    CHECK(g.constant(s)->scalar() == doctest::Approx(0.5));
    CHECK_FALSE(g.constant(v)->scalar().has_value());
    CHECK(g.constant(v)->element_count() == 2);
    CHECK(g.constant(shape_only)->data == nullptr);
    CHECK_THROWS_AS(g.add_constant("bad", {3}, {1.0f}), graph_error);
}

TEST_CASE("bad inputs raise graph_error naming the node") {
    graph g;
    auto x = g.add_input("x");
    CHECK_THROWS_WITH_AS(g.add_op("Relu", "r", {node_id{7}}), doctest::Contains("node 'r' input 0 refers to missing node 7"),
                         graph_error);
    CHECK_THROWS_WITH_AS(g.add_op("Relu", "r", {input_ref(x, 1)}),
                         doctest::Contains("node 'r' input 0 reads output 1 of 'x', which has 1 output(s)"), graph_error);
    CHECK(g.node_count() == 1);  // nothing was added
}

TEST_CASE("replace fuses a chain, redirects users and graph outputs, and keeps a topological order") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    auto r = g.add_op("Relu", "relu", {b});
    auto side = g.add_op("Sigmoid", "side", {x});  // created before the fused node exists
    auto m = g.add_op("Mul", "mul", {r, side});
    g.mark_output(m);
    g.mark_output(r);

    replacement<node_id> rep;
    rep.nodes = {c, b, r};
    rep.inputs = {{x, 0}};
    rep.outputs = {{r, 0}};
    rep.name = "fused";
    rep.op_name = "ConvBnRelu";
    rep.payload = std::string("kernel-42");
    auto f = g.replace(rep);

    CHECK(g.node_count() == 4);
    CHECK_FALSE(g.contains(c));
    CHECK(g.op_name(f) == "ConvBnRelu");
    CHECK(std::any_cast<std::string>(g.payload(f)) == "kernel-42");
    CHECK(g.input(m, 0).node == f);
    CHECK(g.input(f, 0).node == x);
    REQUIRE(g.user_count(x) == 2);
    CHECK(g.graph_output(1).node == f);
    CHECK(g.is_graph_output(f, 0));
    // The order is recomputed: f comes before mul although its id is larger.
    const auto& order = g.nodes();
    auto pos = [&](node_id n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
    CHECK(order.size() == 4);
    CHECK(pos(x) < pos(f));
    CHECK(pos(f) < pos(m));
    CHECK(pos(side) < pos(m));
}

TEST_CASE("a replace that throws leaves nothing behind that changes a later replace") {
    // The write marks the nodes it replaces while it checks them; a throw must clear the marks,
    // or a later replace would take a node of the failed set for one of its own members.
    graph g;
    auto x = g.add_input("x");
    auto a = g.add_op("Relu", "a", {x});
    auto b = g.add_op("Relu", "b", {a});
    auto c = g.add_op("Relu", "c", {b});
    auto side = g.add_op("Relu", "side", {b});  // b escapes a fusion of {b, c}
    g.mark_output(c);
    g.mark_output(side);
    replacement<node_id> bad;
    bad.nodes = {b, c};
    bad.inputs = {{a, 0}};
    bad.outputs = {{c, 0}};
    bad.name = "bad";
    CHECK_THROWS_WITH_AS(g.replace(bad), doctest::Contains("'side' uses output 0 of 'b'"), graph_error);
    bad.nodes = {a, b, b};  // a repeat, found after the first members are looked at
    CHECK_THROWS_AS(g.replace(bad), graph_error);

    // {c} alone reads b: b must not count as a member (input produced inside), and {a} alone
    // has the user b outside (which must be redirected, not skipped as a member).
    replacement<node_id> ok;
    ok.nodes = {c};
    ok.inputs = {{b, 0}};
    ok.outputs = {{c, 0}};
    ok.name = "fc";
    auto fc = g.replace(ok);
    CHECK(g.input(fc, 0).node == b);
    ok.nodes = {a};
    ok.inputs = {{x, 0}};
    ok.outputs = {{a, 0}};
    ok.name = "fa";
    auto fa = g.replace(ok);
    CHECK(g.input(b, 0).node == fa);
    CHECK(g.user_count(fa) == 1);
    CHECK(sgmatch_test::graph_problem(g).empty());
}

TEST_CASE("replace that would dangle or is malformed throws and leaves the graph unchanged") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    auto pool = g.add_op("MaxPool", "pool", {c});  // conv's output escapes
    g.mark_output(b);
    g.mark_output(pool);
    const std::string before = fingerprint(g);

    replacement<node_id> rep;
    rep.nodes = {c, b};
    rep.inputs = {{x, 0}};
    rep.outputs = {{b, 0}};
    rep.name = "f";
    CHECK_THROWS_WITH_AS(g.replace(rep), doctest::Contains("'pool' uses output 0 of 'conv'"), graph_error);
    CHECK(fingerprint(g) == before);

    rep.outputs = {{c, 0}};  // bn is a graph output but not declared
    CHECK_THROWS_WITH_AS(g.replace(rep), doctest::Contains("graph output 'bn'"), graph_error);
    CHECK(fingerprint(g) == before);

    rep.outputs = {{b, 0}, {c, 0}};
    rep.inputs = {{c, 0}};  // an input produced inside
    CHECK_THROWS_AS(g.replace(rep), graph_error);
    rep.inputs = {{x, 0}};
    rep.nodes = {c, c};
    CHECK_THROWS_AS(g.replace(rep), graph_error);
    CHECK(fingerprint(g) == before);

    // Declaring the escaping value as an extra output makes the write legal (MXNet semantics).
    rep.nodes = {c, b};
    auto f = g.replace(rep);
    CHECK(g.output_count(f) == 2);
    CHECK(g.input(pool, 0).node == f);
    CHECK(g.input(pool, 0).port == 1);
    CHECK(g.graph_output(0).node == f);
    CHECK(g.graph_output(0).port == 0);
}
